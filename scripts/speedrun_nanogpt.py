#!/usr/bin/python3
"""speedrun_nanogpt.py — nanoGPT's CPU recipe for Tiny Shakespeare (its README's command:
config/train_shakespeare_char.py with --device=cpu --compile=False --block_size=64
--batch_size=12 --n_layer=4 --n_head=4 --n_embd=128 --max_iters=2000 --lr_decay_iters=2000
--dropout=0.0), timed the way lmlab's eval_at_seconds is: a training clock that counts only
the training iterations, and the loss over the WHOLE validation split (consecutive windows
of block_size, every character but the first predicted once, as lmlab's final evaluation)
when the clock passes each mark.

It imports model.py from the nanoGPT folder given and repeats train.py's loop (same
model, configure_optimizers, get_lr, grad clip, torch.randint batches, seed 1337) without
its periodic estimate_loss, which would cost time outside the clock anyway. The data are
prepared as data/shakespeare_char/prepare.py does (sorted characters, first 90% train).
lmlab does not ship or depend on nanoGPT: scripts/speedrun_frontier.sh calls this when
given a nanoGPT folder.

usage: speedrun_nanogpt.py NANOGPT_DIR TEXT [--marks 60,120,180,300] [--threads N (default: torch's)]
                           [--max_iters 2000]
prints one line per mark: "mark SECONDS iter N train_s T eval_s E val_loss L"
"""
import argparse
import math
import os
import sys
import time

import numpy as np
import torch


def whole_split_loss(model, val, block, rows=64):
    """Mean cross-entropy over every predicted character of val (windows of block, rows
    windows per forward; the short last window alone)."""
    model.eval()
    total, count = 0.0, 0
    v = torch.from_numpy(val.astype(np.int64))
    full = (len(val) - 1) // block
    with torch.no_grad():
        for r0 in range(0, full, rows):
            r1 = min(full, r0 + rows)
            x = v[r0 * block:r1 * block].view(r1 - r0, block)
            y = v[r0 * block + 1:r1 * block + 1].view(r1 - r0, block)
            _, loss = model(x, y)
            total += loss.item() * y.numel()
            count += y.numel()
        rest = len(val) - 1 - full * block
        if rest:
            x = v[full * block:full * block + rest][None, :]
            y = v[full * block + 1:][None, :]
            _, loss = model(x, y)
            total += loss.item() * rest
            count += rest
    model.train()
    return total / count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('nanogpt')
    ap.add_argument('text')
    ap.add_argument('--marks', default='60,120,180,300')
    ap.add_argument('--threads', type=int, default=0)   # 0: torch's own default
    ap.add_argument('--max_iters', type=int, default=2000)
    a = ap.parse_args()
    sys.path.insert(0, a.nanogpt)
    from model import GPT, GPTConfig
    if a.threads > 0:   # Debian's torch 1.13 picks 1 on 2 vCPUs: 88 ms/iteration here,
        torch.set_num_threads(a.threads)   # 207 ms with 2 threads (2026-11-25, Zen 3)
    marks = [float(m) for m in a.marks.split(',')]

    data = open(a.text, 'r').read()   # data/shakespeare_char/prepare.py
    chars = sorted(list(set(data)))
    stoi = {ch: i for i, ch in enumerate(chars)}
    n = len(data)
    train = np.array([stoi[c] for c in data[:int(n * 0.9)]], dtype=np.uint16)
    val = np.array([stoi[c] for c in data[int(n * 0.9):]], dtype=np.uint16)

    # config/train_shakespeare_char.py + the README's CPU flags
    batch_size, block_size = 12, 64
    learning_rate, min_lr, warmup_iters = 1e-3, 1e-4, 100
    max_iters = lr_decay_iters = a.max_iters
    weight_decay, beta1, beta2, grad_clip = 1e-1, 0.9, 0.99, 1.0
    torch.manual_seed(1337)
    model = GPT(GPTConfig(n_layer=4, n_head=4, n_embd=128, block_size=block_size,
                          bias=False, vocab_size=len(chars), dropout=0.0))
    optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), 'cpu')

    def get_batch():
        ix = torch.randint(len(train) - block_size, (batch_size,))
        x = torch.stack([torch.from_numpy(train[i:i + block_size].astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy(train[i + 1:i + 1 + block_size].astype(np.int64))
                         for i in ix])
        return x, y

    def get_lr(it):
        if it < warmup_iters:
            return learning_rate * (it + 1) / (warmup_iters + 1)
        if it > lr_decay_iters:
            return min_lr
        ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
        return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (learning_rate - min_lr)

    clock, it, next_mark = 0.0, 0, 0
    X, Y = get_batch()
    while next_mark < len(marks):
        done = it > max_iters
        if not done:
            t0 = time.time()
            lr = get_lr(it)
            for g in optimizer.param_groups:
                g['lr'] = lr
            _, loss = model(X, Y)
            X, Y = get_batch()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            clock += time.time() - t0
            it += 1
        if done or clock >= marks[next_mark]:
            e0 = time.time()
            vl = whole_split_loss(model, val, block_size)
            e = time.time() - e0
            while next_mark < len(marks) and (done or clock >= marks[next_mark]):
                print(f"mark {marks[next_mark]:g} iter {it} train_s {clock:.1f} "
                      f"eval_s {e:.1f} val_loss {vl:.4f}", flush=True)
                next_mark += 1


if __name__ == '__main__':
    main()
