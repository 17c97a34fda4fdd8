"""The fake AWS's fault kinds (aws_fake_server.py's docstring lists them; State.take_fault hands
out the next one): a stall, a hold, and the error each service answers for the others.  cut,
truncate and malformed are the transport's (aws_fake_http.Handler.send)."""
import select
import time


def stall(handler):
    """Says nothing for --stall-seconds, then closes; a client that hangs up first (its own
    timeout) ends it at once and is counted, so a test can tell that timeout from the fake's."""
    st = handler.server.state
    watch = select.poll()   # RDHUP: the client's FIN, even behind unread bytes (a TLS alert)
    watch.register(handler.connection.fileno(), select.POLLRDHUP)
    if watch.poll(int(st.args.stall_seconds * 1000)):
        st.count("stalls_cut_by_client")
    handler.close_connection = True


def hold(handler):
    """Waits until hold_for other service requests have been answered (or --stall-seconds, a
    hang guard) and records how many were: the order of events, not their timing, shows
    whether the client kept its other slots busy meanwhile."""
    st = handler.server.state
    deadline = time.monotonic() + st.args.stall_seconds
    with st.answered_cv:
        start, want = st.answered, st.hold_for
        while st.answered - start < want and deadline > time.monotonic():
            st.answered_cv.wait(deadline - time.monotonic())
        st.stats["holds"].append(st.answered - start)


# The error each fault kind answers: (Pricing's, every other service's) (status, code, message).
ERRORS = {
    "throttle": ((400, "ThrottlingException", "Rate exceeded"), (503, "RequestLimitExceeded", "Request limit exceeded.")),
    "429": ((429, "TooManyRequestsException", "Too Many Requests"),) * 2,
    "500": ((500, "InternalErrorException", "An internal error has occurred"),
            (500, "InternalError", "An internal error has occurred")),
    "503": ((503, "ServiceUnavailableException", "The service is unavailable"),
            (503, "Unavailable", "The service is unavailable")),
    "expired": ((403, "ExpiredTokenException", "The security token included in the request is expired"),
                (403, "ExpiredToken", "The security token included in the request is expired")),
    "denied": ((403, "AccessDeniedException", "User is not authorized to perform this operation"),
               (403, "UnauthorizedOperation", "User is not authorized to perform this operation")),
}


def error_for(fault, service):
    """(status, code, message) of the error FAULT answers in SERVICE's words, None for no error."""
    pair = ERRORS.get(fault)
    return pair[0 if service == "pricing" else 1] if pair else None
