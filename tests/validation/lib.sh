# Shell functions shared by the validation runs, checks and docs/validation/frontier.sh.
# Source it; TRAINSIM names the binary (default build/trainsim, from the repository root).
TRAINSIM=${TRAINSIM:-build/trainsim}
VALIDATION_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The reduced-cost fidelity: aggregate with in-node collectives priced, within 0.6% of it on
# the three presets (docs/performance.md) at a fifth to a half of the cost.
VALIDATION_FIDELITY=${VALIDATION_FIDELITY:-hybrid}

# The scale study behind one series of claims.tsv, written to DIR/SERIES/scale.csv. Layouts
# are the presets in workloads/ (the paper's layouts were not published); the batch grows with
# the GPUs for weak scaling and stays at the preset's for strong scaling, over the paper's
# largest counts (175B up to 1,024 GCDs, 1T up to 3,072) and a factor of 2 for strong scaling.
validation_series() {
  local dir=$1 series=$2
  local out=(--fidelity "$VALIDATION_FIDELITY" --out "$dir/$series")
  case $series in
    22b) "$TRAINSIM" scale workloads/gpt-22b.yaml --gpus 64 --weak "${out[@]}" ;;
    175b-weak) "$TRAINSIM" scale workloads/gpt-175b.yaml --gpus 128,256,512,1024 --weak \
      --global-batch-size 192 "${out[@]}" ;;
    175b-strong) "$TRAINSIM" scale workloads/gpt-175b.yaml --gpus 512,1024 --strong "${out[@]}" ;;
    1t-weak) "$TRAINSIM" scale workloads/gpt-1t.yaml --gpus 512,1024,1536,3072 --weak \
      --global-batch-size 512 "${out[@]}" ;;
    1t-strong) "$TRAINSIM" scale workloads/gpt-1t.yaml --gpus 1536,3072 --strong "${out[@]}" ;;
    *)
      echo "validation: unknown series '$series'" >&2
      return 2
      ;;
  esac
}

# COLUMN of the last point of a scale.csv (first line a comment, second the header; the
# workload column is quoted and may hold commas).
csv_last() {
  awk -v want="$2" '
    function split_csv(line, out,   n, f, q, c, i) {
      n = 0; f = ""; q = 0
      for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (c == "\"") q = !q
        else if (c == "," && !q) { out[++n] = f; f = "" }
        else f = f c
      }
      out[++n] = f
      return n
    }
    /^#/ { next }
    !col { n = split_csv($0, h); for (i = 1; i <= n; i++) if (h[i] == want) col = i; next }
    { split_csv($0, r); last = r[col] }
    END { if (!col || last == "") exit 1; print last }' "$1"
}

# Sets CLAIM_KIND, CLAIM_PAPER, CLAIM_SERIES, CLAIM_COLUMN, CLAIM_GAP, CLAIM_LO, CLAIM_HI for
# claim NAME of claims.tsv.
claim_load() {
  local line
  line=$(awk -v n="$1" '$1 == n' "$VALIDATION_DIR/claims.tsv")
  if [ -z "$line" ]; then
    echo "validation: no claim '$1' in $VALIDATION_DIR/claims.tsv" >&2
    return 2
  fi
  read -r _ CLAIM_KIND CLAIM_PAPER CLAIM_SERIES CLAIM_COLUMN CLAIM_GAP <<<"$line"
  case $CLAIM_KIND in
    peak) read -r CLAIM_LO CLAIM_HI < <(awk -v p="$CLAIM_PAPER" 'BEGIN { print 0.85 * p, 1.15 * p }') ;;
    weak) CLAIM_LO=95 CLAIM_HI=inf ;;
    strong) read -r CLAIM_LO CLAIM_HI < <(awk -v p="$CLAIM_PAPER" 'BEGIN { print p - 5, p + 5 }') ;;
  esac
}

# The loaded claim's band, for people.
claim_band_text() {
  if [ "$CLAIM_HI" = inf ]; then
    echo ">= $CLAIM_LO%"
  else
    awk -v lo="$CLAIM_LO" -v hi="$CLAIM_HI" 'BEGIN { printf "%.2f-%.2f%%\n", lo, hi }'
  fi
}

# The measured figure (%) of the loaded claim from the runs in DIR.
claim_measure() {
  local v
  v=$(csv_last "$1/$CLAIM_SERIES/scale.csv" "$CLAIM_COLUMN") || return 1
  [ "$CLAIM_COLUMN" = efficiency ] && v=$(awk -v v="$v" 'BEGIN { print 100 * v }')
  awk -v v="$v" 'BEGIN { printf "%.2f\n", v }'
}

# "in band", "known gap", or a sentence saying what is wrong, for measured figure V.
claim_verdict() {
  awk -v v="$1" -v lo="$CLAIM_LO" -v hi="$CLAIM_HI" -v gap="$CLAIM_GAP" 'BEGIN {
    inside = v >= lo && (hi == "inf" || v <= hi)
    if (inside && gap == "-") print "in band"
    else if (inside) print "now in its band: remove the known gap " gap " from claims.tsv and the docs"
    else if (gap != "-" && v - gap <= 0.01 && gap - v <= 0.01) print "known gap"
    else if (gap != "-") print "known gap moved from " gap " to " v ": update claims.tsv and the docs"
    else print "out of band"
  }'
}
