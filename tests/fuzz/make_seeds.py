#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the hand-made seed inputs of tests/fuzz/corpus/.

The encoder mirrors the decoder of fuzz_api.c: each helper finds the byte the
harness reads back as the wanted value. Rerun after changing the input
format: python3 tests/fuzz/make_seeds.py tests/fuzz/corpus"""
import os
import struct
import sys

NSPECIAL = 38  # len(special64) in fuzz_api.c
H = dict(alloc=0, free=1, view=2, host_view=3, host_alloc=4, host_free=5, reset=6, launch=7,
         host_coll=9, query=10, reinit=11)
K = dict(tile_create=0, tile_free=1, tile_fill=2, load=3, store=4, tile_reduce=5, remote_load=6,
         remote_store=7, remote_reduce=8, put=9, get=10, notify=11, wait=12, signal_read=13,
         local=14, barrier=15, broadcast=16, allgather=17, reduce_scatter=18, allreduce=19,
         all_to_all=20, all_to_all_v=21, indexed=22, combine=23, fail=24, query=25,
         moe_dispatch=26, moe_combine=27)
NTS = {K['load']: 1, K['store']: 1, K['put']: 1, K['get']: 1, K['allgather']: 1,
       K['all_to_all']: 1, K['query']: 1, K['all_to_all_v']: 2, K['indexed']: 3, K['combine']: 3,
       K['moe_dispatch']: 3, K['moe_combine']: 1}
INT32, FP32, INT8 = 3, 0, 5


def ext_byte(v, P):
    for b in range(208):
        if (b < 128 and b % 9 == v) or (128 <= b < 160 and P * (b % 4 + 1) == v) or \
           (160 <= b < 208 and b - 151 == v):
            return b
    raise ValueError(v)


def enum_byte(v, nvalid):
    assert -1 <= v <= nvalid
    return v + 1


class Seed:
    def __init__(self, P, a5=0, check=0):
        self.P = P
        b0 = next(b for b in range(256) if b % 3 == P - 2 and (b >> 2) % 3 == 0 and
                  (b >> 4) & 1 == a5 and not (b >> 5) & 1)
        self.b = bytearray([b0, check, 1])  # b1: check bits, timeout 200 ms; arena seed

    def host(self, code, b=0):
        self.b += bytes([H[code], b])

    def alloc(self, nbytes):
        P = self.P
        for b in range(236):
            if (b < 96 and (b % 16 + 1) * 4 * P == nbytes) or \
               (96 <= b < 176 and (b % 64 + 1) * 64 == nbytes):
                self.host('alloc', 0)
                self.b.append(b)
                return
        raise ValueError(nbytes)

    def view(self, win, dtype, shape, slot):
        self.host('view', win)
        self.b += bytes([enum_byte(dtype, 9), len(shape) - 1])
        self.b += bytes(ext_byte(v, self.P) for v in (list(shape) + [0] * 4)[:4]) + b'\0'
        self.b.append(slot)

    def launch(self, ops):
        self.host('launch')
        self.b.append(len(ops) - 1)
        for o in ops:
            self.b += o

    def write(self, path):
        with open(path, 'wb') as f:
            f.write(self.b)


def vref(view):
    return bytes([view, 0])


def idx(P, vals=(0, 0, 0, 0), rel=False):
    return bytes(ext_byte(v, P) for v in vals) + bytes([8 if rel else 0])


def tspec(P, dtype, shape, off=0, kind=0, view=0):
    kb = {0: 0, 1: 200, 2: 250}[kind]
    return bytes([kb, enum_byte(dtype, 9), len(shape) - 1]) + \
        bytes(ext_byte(v, P) for v in (list(shape) + [0] * 4)[:4]) + b'\0' + \
        struct.pack('<I', off) + vref(view)


def kop(P, code, tiles=(0, 0), views=(0, 0, 0, 0), idxs=None, peer=1, e=(0, 0, 0, 2), dtype=0,
        a=1, b=8, value=1, xfer=0, ts=()):
    idxs = idxs or [idx(P)] * 3
    out = bytes([K[code], 0, tiles[0], tiles[1]])
    out += b''.join(vref(v) for v in (list(views) + [0] * 4)[:4])
    out += b''.join(idxs)
    out += bytes([peer])  # rank-relative peer: (me + peer) % P
    out += bytes(enum_byte(x, 4) for x in e) + bytes([enum_byte(dtype, 9)])
    out += bytes([ext_byte(a, P), ext_byte(b, P), ext_byte(value, P), 0, xfer])
    assert len(ts) == NTS.get(K[code], 0)
    for t in ts:
        out += t
    return out


def seeds():
    out = {}
    # barrier, allreduce mesh and ring, broadcast on a [P,1] signal
    for P in (2, 3, 4):
        s = Seed(P)
        s.alloc(4 * P)                       # win 0: signal
        s.alloc(64 * 4)                      # win 1: data
        s.alloc(4 * 2 * (P - 1) * P)         # win 2: ring signal
        s.view(0, INT32, [P, 1], 0)
        s.view(1, FP32, [8, 8], 1)
        s.view(2, INT32, [2 * (P - 1), P], 2)
        s.view(1, FP32, [P, 8], 3)
        s.launch([kop(P, 'barrier', views=(0, 0)),
                  kop(P, 'allreduce', views=(1, 0), e=(0, 0, 0, 1)),
                  kop(P, 'allreduce', views=(1, 2), e=(1, 1, 0, 1)),
                  kop(P, 'allreduce', views=(1, 0), e=(0, 0, 3, 1)),  # Rabenseifner
                  kop(P, 'broadcast', views=(1, 0), e=(0, 0, 1, 1)),
                  kop(P, 'broadcast', views=(1, 0), e=(0, 3, P - 1, 1)),  # binomial
                  kop(P, 'reduce_scatter', views=(3, 0), e=(0, 0, 0, 1))])
        out[f'builtins_p{P}'] = s
    # tiles and tile-level RMA, notify/wait across ranks
    P = 2
    s = Seed(P)
    s.alloc(4 * P)
    s.alloc(64 * 16)
    s.view(0, INT32, [P, 1], 0)
    s.view(1, FP32, [P, 8, 16], 1)
    s.launch([kop(P, 'tile_create', dtype=FP32, a=2, b=8),
              kop(P, 'tile_create', dtype=FP32, a=2, b=8),
              kop(P, 'tile_fill'),
              kop(P, 'remote_store', views=(1,), idxs=[idx(P, (0, 0, 0, 0), rel=True)] * 3),
              kop(P, 'notify', views=(0,), idxs=[idx(P, (0, 0, 0, 0), rel=True)] * 3, value=1),
              kop(P, 'wait', views=(0,), idxs=[idx(P, (1, 0, 0, 0))] * 3, value=1, e=(1, 0, 0, 0)),
              kop(P, 'remote_load', views=(1,), peer=0, idxs=[idx(P, (1, 0, 0, 0))] * 3),
              kop(P, 'tile_reduce', tiles=(0, 1)),
              kop(P, 'load', ts=[tspec(P, FP32, [4, 8])]),
              kop(P, 'store', ts=[tspec(P, FP32, [4, 8], off=256)]),
              kop(P, 'tile_free')])
    out['tiles_rma'] = s
    # put/get with and without xfer regions and chunks
    s = Seed(P)
    s.alloc(64 * 16)
    s.view(0, FP32, [P, 8, 16], 0)
    s.launch([kop(P, 'put', views=(0,), ts=[tspec(P, FP32, [P, 8, 16])]),
              kop(P, 'get', views=(0,), ts=[tspec(P, FP32, [P, 8, 16])]),
              kop(P, 'put', views=(0,), xfer=1 | 14, ts=[tspec(P, FP32, [P, 8, 16])]),
              kop(P, 'put', views=(0,), xfer=1 | 16 | 32, ts=[tspec(P, FP32, [1, 8, 8])],
                  idxs=[idx(P, (0, 0, 0, 0)), idx(P), idx(P, (1, 4, 4, 0))])])
    out['put_get'] = s
    # all_to_all, allgather, all_to_all_v
    P = 3
    s = Seed(P)
    s.alloc(4 * P)
    s.alloc(64 * 4)
    s.alloc(4 * P)
    s.view(0, INT32, [P, 1], 0)
    s.view(1, FP32, [P, 8], 1)
    s.view(2, INT32, [P, 1], 2)
    s.view(1, FP32, [P * 2, 4], 3)
    s.launch([kop(P, 'all_to_all', views=(1, 0), ts=[tspec(P, FP32, [P, 8])]),
              kop(P, 'allgather', views=(1, 0), ts=[tspec(P, FP32, [1, 8])]),
              kop(P, 'allgather', views=(1, 0), ts=[tspec(P, FP32, [1, 8])],
                  e=(0, 0, 3, 2)),  # recursive doubling
              kop(P, 'barrier', views=(0, 0)),
              kop(P, 'all_to_all_v', views=(3, 0, 2),
                  ts=[tspec(P, FP32, [P * 2, 4]), tspec(P, INT32, [P], off=4096)])])
    out['a2a'] = s
    # MoE dispatch and combine on a5sim
    P = 2
    s = Seed(P, a5=1)
    s.alloc(4 * P)                 # signal
    s.alloc(4 * P)                 # send counts
    s.alloc(64 * 4)                # target [P*C, H] fp32
    s.view(0, INT32, [P, 1], 0)
    s.view(1, INT32, [P, 1], 1)
    s.view(2, FP32, [P * 4, 8], 2)
    s.launch([kop(P, 'indexed', views=(2, 0, 1), e=(0, 0, 0, 1),
                  ts=[tspec(P, FP32, [8, 8]), tspec(P, INT32, [P, 1], off=8192),
                      tspec(P, INT32, [P, 4], off=4096)]),
              kop(P, 'combine', views=(2, 0, 1), e=(0, 0, 0, 1),
                  ts=[tspec(P, FP32, [8, 8]), tspec(P, INT32, [P, 4], off=4096),
                      tspec(P, FP32, [P, 4], off=16384)])])
    out['moe'] = s
    # host side: views, host views, host blocks, reset, host builtins, queries, reinit
    P = 4
    s = Seed(P)
    s.alloc(4 * P)
    s.alloc(64 * 8)
    s.view(0, INT32, [P, 1], 0)
    s.view(1, FP32, [P, 32], 1)
    s.host('host_view', 0)
    s.b += vref(1) + bytes([1])
    s.host('host_alloc', 0)
    s.b.append(20)
    s.host('reset', 1)
    s.host('host_coll')
    s.b += bytes([4]) + vref(1) + vref(1) + vref(0) + bytes([1, 1, 1, 2, 0])
    s.host('host_coll')
    s.b += bytes([0]) + vref(1) + vref(1) + vref(0) + bytes([1, 1, 1, 2, 0])
    s.host('query')
    s.b += bytes([1, 3, 2]) + bytes(4)
    s.host('free', 0)
    s.host('reinit', 0)
    s.b += bytes([1, 1])
    out['host'] = s
    return out


if __name__ == '__main__':
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), 'corpus')
    os.makedirs(d, exist_ok=True)
    for name, s in seeds().items():
        s.write(os.path.join(d, name))
