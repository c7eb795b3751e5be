"""The DuckDB peer of `rlctl analyze` in bench/run.sh: per-window quantiles of
requests per client from a raw nginx `combined` log, in one SQL query (regex
for the client and the time, strptime, GROUP BY client and epoch-aligned
window, nearest-rank quantiles). Prints the same figures as rlctl's
`overall.per_window` (samples, p50, p90, p95, p99, p99.9, max), so a run can be
checked by eye against `rlctl analyze --format json`.

Usage: python bench/duckdb_window_quantiles.py FILE [WINDOW_SECONDS]
"""

import sys

import duckdb


def main() -> None:
    path = sys.argv[1].replace("'", "''")
    window = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    sql = f"""
    WITH raw AS (
      SELECT line FROM read_csv('{path}', columns = {{'line': 'VARCHAR'}}, delim = '\x01',
                                quote = '', escape = '', header = false, auto_detect = false)
    ), parsed AS (
      SELECT regexp_extract(line, '^(\\S+) ', 1) AS client,
             strptime(regexp_extract(line, '\\[([^\\]]+)\\]', 1), '%d/%b/%Y:%H:%M:%S %z') AS ts
      FROM raw
    ), counts AS (
      SELECT client, floor(epoch(ts) / {window}) AS w, count(*) AS n FROM parsed GROUP BY ALL
    )
    SELECT count(*), quantile_disc(n, [0.5, 0.9, 0.95, 0.99, 0.999]), max(n) FROM counts
    """
    samples, quantiles, top = duckdb.connect().sql(sql).fetchall()[0]
    print(samples, *quantiles, top)


if __name__ == "__main__":
    main()
