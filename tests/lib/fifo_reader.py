"""A FIFO reader for the tests that check writes through a FIFO (cli_files.py,
measure_cli_output.py)."""
import os
import time


def read_fifo_into(path, got, timeout=120):
    """Opens PATH (a FIFO) for reading at once, then collects what a writer sends until it closes;
    appends the bytes to GOT.  Gives up after TIMEOUT seconds (a writer that never comes)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    data, end = b"", time.monotonic() + timeout
    try:
        while time.monotonic() < end:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:   # a writer is connected but has not written yet
                time.sleep(0.01)
                continue
            if chunk:
                data += chunk
            elif data:
                break                 # the writer closed
            else:
                time.sleep(0.01)      # no writer yet
    finally:
        os.close(fd)
    got.append(data)
