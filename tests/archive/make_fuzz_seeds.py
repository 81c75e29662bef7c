#!/usr/bin/env python3
"""Writes the seed inputs of tests/archive/fuzz_regressions/ (run by upload_message_test through
both fuzz entry points; also a starting corpus for fuzz_archive and fuzz_upload_message).

    python3 tests/archive/make_fuzz_seeds.py tests/archive/fuzz_regressions
"""
import gzip
import struct
import subprocess
import sys
import zlib
from pathlib import Path


def zip_bytes(entries):
    """entries: (name bytes, data bytes, unix mode) stored uncompressed, assembled by hand so that
    names Python's zipfile would clean up (NUL, "..") stay as they are."""
    local, central = b"", b""
    for name, data, mode in entries:
        crc = zlib.crc32(data)
        offset = len(local)
        local += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0x21, crc, len(data), len(data), len(name), 0)
        local += name + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, (3 << 8) | 20, 20, 0, 0, 0, 0x21, crc, len(data),
                               len(data), len(name), 0, 0, 0, 0, mode << 16, offset)
        central += name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(local), 0)
    return local + central + end


FILE, LINK = 0o100644, 0o120777


def main(folder):
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    mapping = b"com.example.Main -> a.a:\n    1:1:void main():10:10 -> a\n"
    seeds = {
        "zip-file-then-folder.zip": zip_bytes([(b"a", b"1", FILE), (b"a/b", b"2", FILE)]),
        "zip-folder-then-file.zip": zip_bytes([(b"a/b", b"2", FILE), (b"a", b"1", FILE)]),
        "zip-traversal.zip": zip_bytes([(b"../../evil", b"x", FILE)]),
        "zip-nul-in-name.zip": zip_bytes([(b"a\0b", b"x", FILE)]),
        "zip-symlink.zip": zip_bytes([(b"link", b"/etc/passwd", LINK)]),
        "zip-mapping.zip": zip_bytes([(b"mapping.txt", mapping, FILE)]),
        "gzip-mapping.gz": gzip.compress(mapping, mtime=0),
        "gzip-truncated.gz": gzip.compress(mapping * 50, mtime=0)[:40],
        "gzip-8mib-of-zeros.gz": gzip.compress(bytes(8 << 20), compresslevel=9, mtime=0),
        "zstd-mapping.zst": subprocess.run(["zstd", "-q", "-c", "-19"], input=mapping, capture_output=True,
                                           check=True).stdout,
        "message-nul-in-app.bin": b"\0shop:1\xff\x01\xffsh\0p",
        "message-unknown-kind.bin": b"\0shop:1\xff\x00\xffpdb\x01",
        "message-app-twice.bin": b"\0shop:1\xff\x01\xffa\xff\x01\xffb",
        "message-huge-location.bin": b"\x01debug\xff\x05\xff" + b"u" * 9000,
    }
    for name, data in seeds.items():
        (out / name).write_bytes(data)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).parent / "fuzz_regressions"))
