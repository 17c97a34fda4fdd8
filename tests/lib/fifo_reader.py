"""A FIFO reader for the tests that check writes through a FIFO (cli_files.py,
measure_cli_output.py)."""
import os
import threading
import time


def start_fifo_reader(path, got, timeout=120):
    """read_fifo_into(PATH, GOT, TIMEOUT) in a thread of its own, returned once it has the FIFO
    open: instbench opens an output FIFO without waiting for a reader (nothing reading it is an
    error), so the command may start only then.  (A fixed 0.2 s sleep before the command was a race
    on a loaded machine.)"""
    opened = threading.Event()
    t = threading.Thread(target=read_fifo_into, args=(path, got, timeout, opened), daemon=True)
    t.start()
    if not opened.wait(60):
        raise RuntimeError("the FIFO reader did not open %s within 60 s" % path)
    return t


def read_fifo_into(path, got, timeout=120, opened=None):
    """Opens PATH (a FIFO) for reading at once (then sets the event OPENED, if given), then collects
    what a writer sends until it closes; appends the bytes to GOT.  Gives up after TIMEOUT seconds
    (a writer that never comes)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    if opened:
        opened.set()
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
