# make_token_files.py DIR V — for the e2e tests (e2e_shards.sh): a wordpiece vocabulary
# of V lines ([UNK], w1..) and a structured token stream written as llm.c shards (4 train
# + 1 val, uint16, 1,024-byte header) and nanoGPT train.bin/val.bin. Python stdlib only.
import struct, sys, os
d, V = sys.argv[1], int(sys.argv[2])
os.makedirs(d + "/llmc", exist_ok=True); os.makedirs(d + "/nano", exist_ok=True)
with open(d + "/vocab.txt", "w") as f:
    f.write("[UNK]\n" + "".join("w%d\n" % i for i in range(1, V)))
ids, x = [], 1
for i in range(60000):
    x = (x * 1103515245 + 12345) % (1 << 31)
    ids.append(1 + (i % 17 if (x >> 16) % 4 else (x >> 8) % (V - 1)))
def shard(p, a):
    with open(p, "wb") as f:
        f.write(struct.pack("<256i", 20240520, 1, len(a), *([0] * 253)))
        f.write(struct.pack("<%dH" % len(a), *a))
tr, va = ids[:54000], ids[54000:]
for k in range(4):
    shard("%s/llmc/tiny_train_%06d.bin" % (d, k), tr[k * 13500:(k + 1) * 13500])
shard(d + "/llmc/tiny_val_000000.bin", va)
open(d + "/nano/train.bin", "wb").write(struct.pack("<%dH" % len(tr), *tr))
open(d + "/nano/val.bin", "wb").write(struct.pack("<%dH" % len(va), *va))
