#!/usr/bin/env bash
# Runs on a lent GPU machine (see scripts/gpu-bundle.sh, which packs
# .gpu/bundle.tar.xz and copies this script to .gpu/run.sh): NVIDIA's OpenCL
# and PoCL's pthread device side by side under the ICD loader, each kernel
# alone on each device, with `--split auto`, and at fixed GPU shares. Each
# report goes to $OUT/<kernel>-<mode>.json, a table to $OUT/summary.txt.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
log=$OUT/gpu.log
exec > >(tee "$log") 2>&1
b=/tmp/clpart-gpu
rm -rf "$b"; mkdir -p "$b"
tar -C "$b" -xJf .gpu/bundle.tar.xz || { echo "bundle: cannot unpack"; exit 1; }
# PoCL looks for its kernel libraries, devices and clang at Debian's paths.
cp -a "$b"/sys/usr/. /usr/
# Libraries the system has stay the system's; the loader, PoCL and PolyLib are ours.
mkdir -p "$b/use"
for f in "$b"/lib/*; do
    so=$(basename "$f")
    case $so in libpocl.so.2) continue;; libOpenCL.so.1|libpolylib64.so.8) ln -s "$f" "$b/use/$so"; continue;; esac
    if ldconfig -p | grep -qE "^\s$so "; then echo "system has $so"; else ln -s "$f" "$b/use/$so"; fi
done
export LD_LIBRARY_PATH=$b/use
nv=$(ldconfig -p | awk '/libnvidia-opencl.so.1 /{print $NF; exit}')
[ -n "$nv" ] || nv=$(find / -name 'libnvidia-opencl.so.1' -not -path '/proc/*' 2>/dev/null | head -1)
echo "nvidia opencl: ${nv:-none}"
mkdir -p "$b/icd"
[ -n "$nv" ] && echo "$nv" > "$b/icd/nvidia.icd"
# PoCL finds its devices and kernel libraries relative to its own file.
cp "$b/lib/libpocl.so.2" /usr/lib/x86_64-linux-gnu/libpocl.so.2
echo /usr/lib/x86_64-linux-gnu/libpocl.so.2 > "$b/icd/pocl.icd"
export OCL_ICD_VENDORS=$b/icd POCL_DEVICES=pthread POCL_CACHE_DIR=/tmp/pocl-cache
uname -r; nproc; grep -m1 'model name' /proc/cpuinfo; nvidia-smi -L; command -v ld || echo "no ld"
"$b/bin/clinfo" -l
clp=$b/bin/clpart
$clp devices | tee "$OUT/devices.txt"
g=$(awk -F: '/\[gpu\]/{print $1; exit}' "$OUT/devices.txt")
c=$(awk -F: '/\[cpu\]/{print $1; exit}' "$OUT/devices.txt")
echo "gpu=$g cpu=$c"
[ -n "$g" ] && [ -n "$c" ] || { echo "need a GPU and a CPU device"; exit 1; }
r=$b/ron
n=1024; nn=$((n*n)); p=262144; a=1024; w=16384; s=4096; ss=$((s*s)); v=$((16<<20))
declare -A K
K[matmul]="--global $n,$n --local 16,16 --arg c=zeros:$nn --arg a=rand:$nn:1 --arg b=rand:$nn:2 --arg width=$n"
K[mdh]="--global $p --local 64 --arg ax=rand:$a:1 --arg ay=rand:$a:2 --arg az=rand:$a:3 --arg charge=rand:$a:4 --arg size=rand:$a:5 --arg gx=rand:$p:6 --arg gy=rand:$p:7 --arg gz=rand:$p:8 --arg val=zeros:$p --arg pre1=0.5 --arg xkappa=0.1 --arg natoms=$a"
K[random_walk]="--global $w --local 32 --arg bval=rand:4096:1 --arg out=zeros:$((w/32)) --arg gw=64 --arg gh=64 --arg nwalks=4 --arg maxsteps=2048 --arg seed=12345"
K[stencil2d]="--global $s,$s --local 32,8 --arg in=rand:$ss:1 --arg out=zeros:$ss --arg width=$s --arg height=$s"
K[vadd]="--global $v --local 256 --arg a=rand:$v:1 --arg b=rand:$v:2 --arg c=zeros:$v"
run() { # kernel mode repeat split [more]
    local k=$1 m=$2 rep=$3 sp=$4; shift 4
    local t0=$(date +%s.%N)
    timeout 90 $clp run "$r/$k.ron" ${K[$k]} --split "$sp" --repeat "$rep" --json "$@" > "$OUT/$k-$m.json" 2> "$OUT/$k-$m.err"
    echo "$k $m rc=$? $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"
}
for k in mdh matmul random_walk stencil2d vadd; do
    run $k gpu 10 "$g:1"
    run $k cpu 3 "$c:1"
    run $k auto 20 auto
    run $k autoverify 8 auto --verify
    # a first launch, devices unmeasured (after one unmeasured warm-up)
    run $k firsteven 1 "$g:0.5,$c:0.5" --warmup 1
    run $k firstauto 1 auto --warmup 1
    for sh in 0.86 0.95 0.98; do run $k "g$sh" 5 "$g:$sh,$c:$(awk "BEGIN{print 1 - $sh}")"; done
done
python3 - "$OUT" <<'PY' | tee "$OUT/summary.txt"
import json, sys, glob, os, statistics as st
out = sys.argv[1]
rows = {}
for f in sorted(glob.glob(os.path.join(out, "*.json"))):
    k, m = os.path.basename(f)[:-5].rsplit("-", 1)
    try:
        d = json.load(open(f))
    except Exception as e:
        print(f"{k} {m}: no report ({e})"); continue
    walls = d.get("wall_ms_all") or [d.get("wall_ms")]
    tail = walls[5:] if m.startswith("auto") else walls if m.startswith("first") else walls[1:] or walls
    sh = ",".join(f"{x['device']}:{x['share']:.3f}" for x in d.get("shares", []))
    dev = "; ".join(f"{x['index']} {x['work_groups']} wg kernel {x['kernel_ms']:.2f} busy {x.get('busy_ms', 0):.2f} ms" for x in d.get("devices", []))
    notes = " ".join(n for n in d.get("notes", []) if n.startswith(("verified", "in two rounds")))
    print(f"{k:12} {m:6} median {st.median(tail):9.3f} ms  min {min(tail):9.3f}  shares {sh}  [{dev}]  verified={d.get('verified')} mismatch={d.get('mismatch')} bytes={d.get('bytes_total')} {notes}")
    if m.startswith("auto"):
        print(f"{'':12} {'':6} walls {[round(x, 2) for x in walls]}")
PY
# (at most 8 files come back from the machine)
(cd "$OUT" && tar -czf results.tar.gz *.json *.err && rm -f *.json *.err)
