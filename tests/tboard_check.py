#!/usr/bin/env python3
"""tboard_check.py — reads TensorBoard event files independently of lmlab's writer, as
TensorBoard's reader expects them (tensorboard/backend/event_processing/
event_file_loader.py and TensorFlow's record_reader): every record is a little-endian
uint64 length, the masked CRC-32C of those 8 bytes, the payload, the masked CRC-32C of the
payload; every payload is an Event that `protoc --decode_raw` (Debian's protobuf-compiler)
decodes; the first is the file version record (field 3 = "brain.Event:2"). Payloads are
also walked here with a small wire-format reader (no lmlab code, no protobuf library) to
list (step, tag, kind, value). Prints one JSON object per file on stdout:
  {"file", "records", "version", "events": [[step, wall, tag, kind, value], ...]}
kind: "scalar" (value: the float), "histo" (value: [min, max, num, sum, [limits],
[counts]]), "text" (value: [plugin, text]). Exits 1 with a message on the first defect.
Usage: tboard_check.py FILE... (decode_raw on every Nth record: TB_DECODE_EVERY, 1)."""
import json
import os
import struct
import subprocess
import sys

CRC_TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    CRC_TABLE.append(c)


def masked_crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    c ^= 0xFFFFFFFF
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def fail(msg):
    print("FAIL " + msg, file=sys.stderr)
    sys.exit(1)


def varint(b, i):
    v = s = 0
    while True:
        x = b[i]
        i += 1
        v |= (x & 0x7F) << s
        s += 7
        if not x & 0x80:
            return v, i


def fields(b):
    """(number, wire type, value) of a message's fields: varints as ints, fixed64/32 as
    raw bytes, length-delimited as bytes."""
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wt)
        out.append((num, wt, v))
    if i != len(b):
        raise ValueError("truncated message")
    return out


def one(fs, num):
    for n, _, v in fs:
        if n == num:
            return v
    return None


def packed_doubles(fs, num):
    out = []
    for n, wt, v in fs:
        if n == num:
            out += list(struct.unpack("<%dd" % (len(v) // 8), v)) if wt == 2 else [struct.unpack("<d", v)[0]]
    return out


def value_of(v):
    vf = fields(v)
    tag = (one(vf, 1) or b"").decode()
    if one(vf, 2) is not None:
        return tag, "scalar", struct.unpack("<f", one(vf, 2))[0]
    if one(vf, 5) is not None:
        h = fields(one(vf, 5))
        d = lambda k: struct.unpack("<d", one(h, k))[0] if one(h, k) is not None else 0.0
        return tag, "histo", [d(1), d(2), d(3), d(4), packed_doubles(h, 6), packed_doubles(h, 7)]
    if one(vf, 8) is not None:
        t = fields(one(vf, 8))
        md = fields(one(vf, 9) or b"")
        pd = fields(one(md, 1) or b"")
        return tag, "text", [(one(pd, 1) or b"").decode(), (one(t, 8) or b"").decode(),
                             one(t, 1)]
    return tag, "other", None


def check(path, every):
    data = open(path, "rb").read()
    if not os.path.basename(path).startswith("events.out.tfevents."):
        fail("%s: not named events.out.tfevents.*" % path)
    off, k, events, version = 0, 0, [], None
    last_step = -1
    while off < len(data):
        if off + 12 > len(data):
            fail("%s: a truncated record header at byte %d" % (path, off))
        head = data[off:off + 8]
        (n,) = struct.unpack("<Q", head)
        (crc_len,) = struct.unpack("<I", data[off + 8:off + 12])
        if crc_len != masked_crc32c(head):
            fail("%s: record %d: the length's CRC does not match" % (path, k))
        payload = data[off + 12:off + 12 + n]
        if len(payload) != n or off + 16 + n > len(data):
            fail("%s: record %d is truncated" % (path, k))
        (crc_data,) = struct.unpack("<I", data[off + 12 + n:off + 16 + n])
        if crc_data != masked_crc32c(payload):
            fail("%s: record %d: the data's CRC does not match" % (path, k))
        off += 16 + n
        if k == 0 or k % every == 0:
            r = subprocess.run(["protoc", "--decode_raw"], input=payload, capture_output=True)
            if r.returncode != 0:
                fail("%s: record %d: protoc --decode_raw: %s" % (path, k, r.stderr.decode()))
            if k == 0 and '3: "brain.Event:2"' not in r.stdout.decode():
                fail("%s: the first record is not the file version: %s" % (path, r.stdout.decode()))
        ev = fields(payload)
        wall = struct.unpack("<d", one(ev, 1))[0] if one(ev, 1) is not None else 0.0
        step = one(ev, 2) or 0
        if k == 0:
            version = (one(ev, 3) or b"").decode()
            if version != "brain.Event:2":
                fail("%s: file version %r" % (path, version))
        else:
            if one(ev, 5) is None:
                fail("%s: record %d carries no summary" % (path, k))
            if step < last_step:
                fail("%s: record %d goes back from step %d to %d" % (path, k, last_step, step))
            last_step = step
            for num, _, v in fields(one(ev, 5)):
                if num == 1:
                    tag, kind, val = value_of(v)
                    events.append([step, wall, tag, kind, val])
        k += 1
    return {"file": path, "records": k, "version": version, "events": events}


def main():
    every = int(os.environ.get("TB_DECODE_EVERY", "1"))
    for p in sys.argv[1:]:
        print(json.dumps(check(p, every)))


main()
