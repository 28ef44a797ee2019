# Shared by the documentation tests (sourced).

# The keys of the C array ARRAY in FILE (a `static const char *const ARRAY[] = {...};` list),
# one a line, each with PREFIX before it.
accepted_keys() { # FILE ARRAY PREFIX
  awk -v a="$2" '$0 ~ "const " a "\\[\\] = " { on = 1 } on { print } on && /};/ { exit }' "$1" |
    grep -o '"[a-z0-9_]*"' | tr -d '"' | sed "s/^/$3/"
}
