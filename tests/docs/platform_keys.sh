#!/usr/bin/env bash
# Every platform key documented in platforms/README.md ("Keys") is accepted by the loader (it
# may be refused for its value, never as an unknown key), and every key the loader accepts is
# documented there. Rows may list relative forms (`gpu.peak.bf16`, `.fp16`: gpu.peak.fp16) and
# say which variant takes a key: "(fat tree)", "(nccl)", "(rccl)".
#   tests/docs/platform_keys.sh TRAINSIM      (from the repository root)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin=${1:?usage: platform_keys.sh TRAINSIM}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# A valid platform in flow style, one section a line, so a key goes in by substitution.
base() { # NETWORK LIBRARY
  echo 'name: t'
  echo 'gpu: {model: m, peak: {bf16: 100Tf}, hbm_capacity: 64GiB, hbm_bandwidth: 1TBps, gemm_ceiling: 0.8, gemm_tile: {m: 128, n: 128}, compute_units: 100, kernel_launch: 2us}'
  echo 'node: {gpus: 2, links: [{gpus: [0, 1], bandwidth: 100GBps, latency: 1us}], nics: [{gpu: 0, bandwidth: 25GBps, latency: 1us, pcie_bandwidth: 50GBps, pcie_latency: 1us}]}'
  if [ "$1" = fat-tree ]; then
    echo 'network: {topology: fat-tree, radix: 8, link: {bandwidth: 25GBps, latency: 1us}}'
  else
    echo 'network: {topology: dragonfly, groups: 2, switches_per_group: 2, nodes_per_switch: 2, global_links_per_group_pair: 1, local_link: {bandwidth: 25GBps, latency: 1us}, global_link: {bandwidth: 25GBps, latency: 1us}}'
  fi
  echo 'nodes: 8'
  echo 'reliability: {failure_rates: {node: 5e-3/day}, restart: 10min, storage: {write_bandwidth: 1TBps, read_bandwidth: 1TBps, node_bandwidth: 10GBps}}'
  case $2 in
    nccl) echo 'collectives: {library: nccl, arch: hopper, channels: 16, cpu: intel, node_link_efficiency: 0.8, overlap_slowdown: 0.1, launch: 30us, fsdp_unit: 1ms}' ;;
    rccl) echo 'collectives: {library: rccl, tuning_model: 3, cpu: amd, node_link_efficiency: 0.7, overlap_slowdown: 0.1, launch: 30us, fsdp_unit: 1ms}' ;;
  esac
}
base dragonfly nccl >"$work/base.yaml"
"$bin" platform check "$work/base.yaml" >/dev/null || { echo "platform_keys.sh: the base platform is refused" >&2; exit 1; }

# The documented keys: the first cell of each row of the Keys table, relative forms resolved.
rows=$(awk '/^## Keys/ { on = 1; next } /^## / { on = 0 } on && /^\| `/' platforms/README.md |
  cut -d'|' -f2)
documented=""
while IFS= read -r cell; do
  variant=dragonfly library=nccl
  case $cell in *"(fat tree)"*) variant=fat-tree ;; esac
  case $cell in *"(rccl)"*) library=rccl ;; esac
  prefix=""
  for key in $(grep -o '`[^`]*`' <<<"$cell" | tr -d '`'); do
    if [ "${key#.}" != "$key" ]; then key=$prefix${key#.}; else prefix=${key%.*}.; fi
    key=${key%\[\]}
    documented+="$key"$'\n'
    section=${key%%.*} rest=${key#*.}
    base "$variant" "$library" >"$work/p.yaml"
    if [ "$section" = "$key" ]; then # top level: replace or add it
      { grep -v "^$key:" "$work/p.yaml"; echo "$key: zzz"; } >"$work/k.yaml"
    elif [ "${rest%.*}" != "$rest" ]; then # section.map.leaf
      sed "s/^$section: \(.*\)\b${rest%.*}: {/$section: \1${rest%.*}: {${rest##*.}: zzz, /" \
        "$work/p.yaml" >"$work/k.yaml"
    else
      sed "s/^$section: {/$section: {$rest: zzz, /" "$work/p.yaml" >"$work/k.yaml"
    fi
    if cmp -s "$work/p.yaml" "$work/k.yaml"; then
      echo "platform_keys.sh: could not place $key in the base platform" >&2
      failures=$((failures + 1))
      continue
    fi
    out=$("$bin" platform check "$work/k.yaml" 2>&1 || true)
    # "duplicate key": the valid base has it already, in that mapping: accepted.
    if grep -q "unknown key" <<<"$out"; then
      echo "documented but refused: $key ($(head -1 <<<"$out"))" >&2
      failures=$((failures + 1))
    fi
  done
done <<<"$rows"
[ "$(wc -l <<<"$documented")" -ge 30 ] || { echo "platform_keys.sh: too few keys read" >&2; exit 1; }

# The loader's lists of keys, section by section (sim/network/platform.c); the keys of a link,
# a NIC and a {bandwidth, latency} pair are documented in their rows' text.
accepted() { accepted_keys sim/network/platform.c "$1" "$2"; } # ARRAY PREFIX
for key in $(accepted top_keys "") $(accepted gpu_keys gpu.) $(accepted tile_keys gpu.gemm_tile.) \
  $(accepted node_keys node.) $(accepted dragonfly_keys network.) $(accepted fat_tree_keys network.) \
  $(accepted ccl_keys collectives.) $(accepted reliability_keys reliability.) \
  $(accepted rate_keys reliability.failure_rates.) $(accepted storage_keys reliability.storage.); do
  case $key in gpu | node | collectives | gpu.peak | gpu.gemm_tile | reliability.failure_rates | \
    reliability.storage) continue ;; esac
  if ! grep -qx "$key" <<<"$documented"; then
    echo "accepted but not documented in platforms/README.md: $key" >&2
    failures=$((failures + 1))
  fi
done
keys_text=$(awk '/^## Keys/ { on = 1; next } /^## / { on = 0 } on' platforms/README.md)
for key in $(accepted link_keys "") $(accepted nic_keys "") $(accepted params_keys ""); do
  if ! grep -qw "$key" <<<"$keys_text"; then
    echo "accepted but not documented in platforms/README.md: $key (a link, NIC or cable key)" >&2
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ] && echo "platform_keys.sh: $(grep -c . <<<"$documented") documented keys, all accepted and all documented"
exit $((failures > 0))
