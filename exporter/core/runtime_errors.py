"""What ExecuTorch's runtime means when it refuses a program, in words: its error codes by name,
and, for a missing operator, which ones. Its Python runtime says only "Failed to load method
forward, error: 0x:14"; a test's failure names what is missing instead (docs/compatibility.md)."""

import re

# runtime/core/error.h, the same in ExecuTorch 1.4.1's and 1.5.1's headers.
NAMES = {
    0x01: "Internal", 0x02: "InvalidState", 0x03: "EndOfMethod", 0x04: "AlreadyLoaded",
    0x10: "NotSupported", 0x11: "NotImplemented", 0x12: "InvalidArgument", 0x13: "InvalidType",
    0x14: "OperatorMissing", 0x15: "RegistrationExceedingMaxKernels", 0x16: "RegistrationAlreadyRegistered",
    0x20: "NotFound", 0x21: "MemoryAllocationFailed", 0x22: "AccessFailed", 0x23: "InvalidProgram",
    0x24: "InvalidExternalData", 0x25: "OutOfResources",
    0x30: "DelegateInvalidCompatibility", 0x31: "DelegateMemoryAllocationFailed", 0x32: "DelegateInvalidHandle",
}
OPERATOR_MISSING = 0x14


def code_of(message):
    """The error code in the Python runtime's message ("error: 0x:14" in 1.4.1, "error: 0x14"), or None."""
    found = re.search(r"error:? 0x:?([0-9a-fA-F]+)", message)
    return int(found.group(1), 16) if found else None


class Refused(ValueError):
    """A runtime refused the program: `reason` in words, `version` the ExecuTorch that refused it."""

    def __init__(self, message, reason, version):
        super().__init__(message)
        self.reason, self.version = reason, version


def reason(message, needed, registered):
    """The runtime's first line in words: a missing operator by name (those of `needed`, the
    program's operators, that `registered` lacks), any other error code with its name."""
    first = (message.splitlines() or [""])[0]
    code = code_of(first)
    missing = sorted(set(needed) - set(registered)) if code == OPERATOR_MISSING else []
    if missing:
        return f"it needs {', '.join(missing)}, which it does not register (error 0x{code:x}, OperatorMissing)"
    return f"{first} ({NAMES[code]})" if code in NAMES else first
