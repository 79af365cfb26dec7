"""An attack on the exec check, run as a command by tests/sandbox/test_exec_check.py: install a
seccomp filter of our own whose listener answers every execve "continue" (on a tie the most
recent filter's listener gets the notification), then run rm. The kernel refuses a second
listener in one process tree (EBUSY), so queryloop's listener still sees the exec."""

import ctypes
import fcntl
import os
import struct
import threading

libc = ctypes.CDLL(None, use_errno=True)


def ins(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


LD, JEQ, RET = 0x20, 0x15, 0x06
prog = b"".join(
    [
        ins(LD, 0, 0, 0),  # nr
        ins(JEQ, 0, 1, 59),  # execve?
        ins(RET, 0, 0, 0x7FC00000),  # USER_NOTIF
        ins(RET, 0, 0, 0x7FFF0000),  # ALLOW
    ]
)
buf = ctypes.create_string_buffer(prog)


class F(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("f", ctypes.c_void_p)]


f = F(len(prog) // 8, ctypes.cast(buf, ctypes.c_void_p).value)
libc.prctl(38, 1, 0, 0, 0)
fd = libc.syscall(317, 1, 8, ctypes.byref(f))
print("listener", fd, ctypes.get_errno(), flush=True)
if fd >= 0:

    def serve() -> None:
        while True:
            b = bytearray(80)
            try:
                fcntl.ioctl(fd, 0xC0502100, b)
            except OSError:
                continue
            nid = struct.unpack_from("=Q", b)[0]
            try:
                fcntl.ioctl(fd, 0xC0182101, struct.pack("=QqiI", nid, 0, 0, 1))
            except OSError:
                pass

    threading.Thread(target=serve, daemon=True).start()
os.system("rm -rf x")
