#!/usr/bin/env python3
"""make_hostile_pt.py — writes the crafted torch.save files of issue 25 (no torch needed).

A stand-in `torch` module gives pickle the globals torch.save names
(torch._utils._rebuild_tensor_v2, torch.FloatStorage), so the pickles are byte for byte
what torch.save's protocol-2 pickler writes for these (impossible) tensors. Each file is
a bare state_dict; with --base FILE.pt the hostile tensor is put into a copy of that
file's own state_dict instead (e.g. tests/fixtures/reference/dispatcher.pt: it replaces
decoder.bias, or is added as "junk"), so a whole model imports around it.

  tests/fuzz/make_hostile_pt.py OUTDIR [--base FILE.pt]

Files written (the tests build the same inputs in C: tests/test_pickle.c):
  numel-wrap.pt    decoder.bias over a storage declaring 2^62+2 floats held in 8 bytes
                   (numel*4 wraps to 8)
  numel-wrap-offset.pt  the same, viewed at offset 2^40
  stride-wrap.pt   decoder.bias of shape (2^24+1,) stride (2^40,) over 1 float
                   ((shape-1)*stride wraps to 0)
  stride0.pt       a 4-byte storage viewed as 16384x16384 with stride (0, 0)
  deflate.pt       a (4096, 4096) float tensor whose 64 MiB of zeros deflate to ~64 KiB
  shared.pt        8 tensors viewing one 64 MiB storage
Not a general torch.save writer: float32 storages only."""
import collections
import io
import pickle
import sys
import types
import zipfile

torch = types.ModuleType("torch")
utils = types.ModuleType("torch._utils")


class FloatStorage:
    pass


FloatStorage.__module__ = "torch"
torch.FloatStorage = FloatStorage


def _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks, meta=None):
    return Tensor(storage, offset, size, stride)


def _rebuild_parameter(t, requires_grad, hooks):
    return t


_rebuild_tensor_v2.__module__ = _rebuild_parameter.__module__ = "torch._utils"
utils._rebuild_tensor_v2 = _rebuild_tensor_v2
utils._rebuild_parameter = _rebuild_parameter
torch._utils = utils
sys.modules["torch"] = torch
sys.modules["torch._utils"] = utils


class Storage:
    def __init__(self, key, numel, data=b""):
        self.key, self.numel, self.data = key, numel, data


class Tensor:
    def __init__(self, storage, offset, size, stride):
        self.storage, self.offset, self.size, self.stride = storage, offset, size, stride

    def __reduce_ex__(self, proto):
        return (_rebuild_tensor_v2, (self.storage, self.offset, tuple(self.size),
                                     tuple(self.stride), False, collections.OrderedDict()))


class Writer(pickle.Pickler):
    def persistent_id(self, o):
        if isinstance(o, Storage):
            return ("storage", FloatStorage, o.key, "cpu", o.numel)
        return None


class Reader(pickle.Unpickler):
    def __init__(self, f, z, prefix):
        super().__init__(f)
        self.z, self.prefix = z, prefix

    def find_class(self, mod, name):
        if mod == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if mod == "torch._utils":
            return getattr(utils, name)
        if mod == "torch" and name.endswith("Storage"):
            return FloatStorage
        raise pickle.UnpicklingError("refused %s.%s" % (mod, name))

    def persistent_load(self, pid):
        _, _, key, _, numel = pid
        return Storage(key, numel, self.z.read(self.prefix + "data/" + key))


def load_base(path):
    z = zipfile.ZipFile(path)
    pkl = [n for n in z.namelist() if n.endswith("data.pkl")][0]
    prefix = pkl[:-len("data.pkl")]
    obj = Reader(io.BytesIO(z.read(pkl)), z, prefix).load()
    if isinstance(obj, dict) and "model_state_dict" in obj:
        obj = obj["model_state_dict"]
    return collections.OrderedDict(obj)


def save(path, sd, deflate=()):
    buf = io.BytesIO()
    Writer(buf, protocol=2).dump(sd)
    storages = {}
    for t in sd.values():
        storages[t.storage.key] = t.storage
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", buf.getvalue())
        for key, s in storages.items():
            method = zipfile.ZIP_DEFLATED if key in deflate else zipfile.ZIP_STORED
            z.writestr(zipfile.ZipInfo("archive/data/" + key), s.data, compress_type=method)
        z.writestr("archive/version", "3\n")


def main():
    out = sys.argv[1]
    base = None
    if "--base" in sys.argv:
        base = sys.argv[sys.argv.index("--base") + 1]

    def sd_with(name, t, extra=None):
        sd = load_base(base) if base else collections.OrderedDict()
        sd[name] = t
        for k, v in (extra or {}).items():
            sd[k] = v
        return sd

    n = 37
    wrap = Storage("hostile", 2**62 + 2, b"\0" * 8)
    save(out + "/numel-wrap.pt", sd_with("decoder.bias", Tensor(wrap, 0, (n,), (1,))))
    save(out + "/numel-wrap-offset.pt",
         sd_with("decoder.bias", Tensor(wrap, 2**40, (n,), (1,))))
    one = Storage("hostile", 1, b"\0" * 4)
    save(out + "/stride-wrap.pt",
         sd_with("decoder.bias", Tensor(one, 0, (2**24 + 1,), (2**40,))))
    save(out + "/stride0.pt",
         sd_with("junk", Tensor(one, 0, (16384, 16384), (0, 0))))
    big = Storage("zeros", 4096 * 4096, b"\0" * (4096 * 4096 * 4))
    save(out + "/deflate.pt", sd_with("junk", Tensor(big, 0, (4096, 4096), (4096, 1))),
         deflate=("zeros",))
    shared = {"junk%d" % i: Tensor(big, 0, (4096, 4096), (4096, 1)) for i in range(8)}
    save(out + "/shared.pt", sd_with("junk", shared.pop("junk0"), shared), deflate=("zeros",))


if __name__ == "__main__":
    main()
