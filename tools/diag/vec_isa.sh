#!/usr/bin/env bash
# What the CPU compiler's instruction-set checks cost a new process on the GPU host, and
# whether TORCHINDUCTOR_VEC_ISA_OK=1 (skip them) changes the chosen instruction set (diagnostic).
cd "$(dirname "$0")/../.."
for i in 1 2; do python3 -c "import time; t = time.time(); import torch; print(f'import torch {time.time() - t:.1f} s')"; done
pick='import torch; from torch._inductor import cpu_vec_isa as v; print("picked", v.pick_vec_isa(), "valid", v.valid_vec_isa_list())'
for env in "" "TORCHINDUCTOR_VEC_ISA_OK=1"; do
  d=$(mktemp -d)
  echo "== env: ${env:-default}, fresh cache $d"
  t=$(date +%s%N)
  env $env TORCHINDUCTOR_CACHE_DIR=$d python3 -c "$pick"
  echo "pick_vec_isa process: $(( ($(date +%s%N) - t) / 1000000 )) ms"
  env $env TORCHINDUCTOR_CACHE_DIR=$d python3 tools/diag/first_compile.py cpu 2>&1 | grep -v "^ *[0-9]" | head -8
  echo "-- same cache again"
  env $env TORCHINDUCTOR_CACHE_DIR=$d python3 tools/diag/first_compile.py cpu 2>&1 | grep -E "compile:|total"
done
