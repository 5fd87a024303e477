# Helpers the benchmark scripts source (bash).

# The median of the numbers on standard input (whitespace-separated).
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

# bench_p50 CLI METHOD: METHOD's p50 in ns from one quick `threadtime bench`
# run on one thread (the physical floor a benchmark quotes beside its figures).
bench_p50() {
  "$1" bench --quick --methods "$2" --threads 1 --json |
    sed -n "s/.*\"method\": \"$2\".*\"p50_ns\": \\([0-9.]*\\).*/\\1/p"
}
