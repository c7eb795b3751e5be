"""Runs the queries `rlctl sql --format json` printed on a real engine and
saves each result where `rlctl analyze --from-sql-result DIR` looks for it.

Used by tests/cli/scale.rs; runnable by hand too:

    rlctl sql --dialect duckdb --table events ... --format json > q.json
    python3 tests/engines/run_queries.py --engine duckdb --queries q.json \
        --view events=events.parquet --out result/

--view NAME=FILE.parquet makes the Parquet file a view called NAME;
--raw-log NAME=FILE makes a combined-format access log a view NAME with the
columns ts (TIMESTAMP), vhost (empty), ip, method, target, status, parsed with the engine's
own regular expressions (DuckDB only: a lake table as the user would have it;
a request line of `-` has no method, as in rlctl's parser). --raw-vhost-log
NAME=FILE does the same for Apache vhost_combined lines, with `vhost` the
virtual host without its port.
--job QUERIES=OUT (repeatable, instead of --queries and --out) runs several
query files in one engine session, each saving into its own OUT: one Spark
start-up for many queries.
--from-dialect trino|bigquery (DuckDB only) first translates the queries from
that dialect with sqlglot, whose parser for the dialect must accept them: the
check available here for engines that do not run on one machine. --engine
clickhouse runs ClickHouse itself, in process (PyPI chdb), over --view files of
`rlctl convert` (with `ts`, a DateTime64 of their `ts_ms`, added).
DuckDB and ClickHouse write NAME.parquet files (NAME.csv with --csv); Spark writes NAME/
directories of part files, as df.write.parquet does. Prints one line per query
with its time and rows.
"""

import argparse
import json
import os
import sys
import time


def duckdb_engine(views, raw_logs, csv):
    import duckdb

    con = duckdb.connect()
    for name, path in views:
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{path}')")
    for name, path, vhost in raw_logs:
        # %h %l %u [%t] "%r" %>s %b ...: the fields rlctl's combined parser reads;
        # with --raw-vhost-log, Apache vhost_combined's `%v:%p ` before them.
        lead = r"(\S+):[0-9]+ " if vhost else "()"
        pattern = lead + r'(\S+) \S+ \S+ \[([^\]]+)\] "(\S*) ?(\S*)[^"]*" (\d{3})'
        pattern = "^" + pattern
        con.execute(
            f"""CREATE VIEW {name} AS
            SELECT strptime(regexp_extract(line, '{pattern}', 3), '%d/%b/%Y:%H:%M:%S %z') AS ts,
                   regexp_extract(line, '{pattern}', 1) AS vhost,
                   regexp_extract(line, '{pattern}', 2) AS ip,
                   CASE WHEN regexp_extract(line, '{pattern}', 4) = '-'
                         AND regexp_extract(line, '{pattern}', 5) = '' THEN ''
                        ELSE regexp_extract(line, '{pattern}', 4) END AS method,
                   regexp_extract(line, '{pattern}', 5) AS target,
                   CAST(regexp_extract(line, '{pattern}', 6) AS INTEGER) AS status
            FROM read_csv('{path}', columns = {{'line': 'VARCHAR'}}, delim = '\\x01',
                          quote = '', escape = '', header = false, auto_detect = false)"""
        )

    def run(name, sql, out):
        if csv:
            target = os.path.join(out, name + ".csv")
            con.execute(f"COPY ({sql}) TO '{target}' (FORMAT csv, HEADER true)")
            return con.execute(f"SELECT COUNT(*) FROM read_csv('{target}')").fetchone()[0]
        target = os.path.join(out, name + ".parquet")
        con.execute(f"COPY ({sql}) TO '{target}' (FORMAT parquet)")
        return con.execute(f"SELECT COUNT(*) FROM read_parquet('{target}')").fetchone()[0]

    return run, lambda: None


def spark_engine(views, raw_logs, csv):
    if raw_logs or csv:
        sys.exit("--raw-log and --csv are for DuckDB only")
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]")
        .appName("rlctl-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    for name, path in views:
        spark.read.parquet(path).createOrReplaceTempView(name)

    def run(name, sql, out):
        frame = spark.sql(sql)
        frame.write.mode("overwrite").parquet(os.path.join(out, name))
        return spark.read.parquet(os.path.join(out, name)).count()

    return run, spark.stop


def clickhouse_engine(views, raw_logs, csv):
    if raw_logs or csv:
        sys.exit("--raw-log and --csv are for DuckDB only")
    from chdb import session

    sess = session.Session()
    sess.query("CREATE DATABASE IF NOT EXISTS rlctl ENGINE = Memory")
    sess.query("USE rlctl")
    for name, path in views:
        # Also `ts`, the time as a DateTime64 (for --time-unit timestamp).
        sess.query(
            f"CREATE VIEW {name} AS SELECT *, fromUnixTimestamp64Milli(ts_ms, 'UTC') AS ts "
            f"FROM file('{path}', Parquet)"
        )

    def run(name, sql, out):
        target = os.path.join(out, name + ".parquet")
        with open(target, "wb") as f:
            f.write(sess.query(sql, "Parquet").bytes())
        count = sess.query(f"SELECT count() FROM file('{target}', Parquet)", "CSV")
        return int(count.bytes().decode().strip())

    return run, sess.close


def translated(query, dialect):
    """The query parsed as `dialect` by sqlglot (which fails on what that
    dialect's grammar does not accept) and written for DuckDB."""
    import sqlglot

    sql = query["sql"]
    (sql,) = sqlglot.transpile(
        sql, read=dialect, write="duckdb", unsupported_level=sqlglot.ErrorLevel.RAISE
    )
    return {**query, "sql": sql}


def pairs(values):
    out = []
    for v in values or []:
        name, _, path = v.partition("=")
        out.append((name, os.path.abspath(path)))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", choices=["duckdb", "spark", "clickhouse"], required=True)
    parser.add_argument("--queries")
    parser.add_argument("--out")
    parser.add_argument("--job", action="append", default=[])
    parser.add_argument("--view", action="append")
    parser.add_argument("--raw-log", action="append")
    parser.add_argument("--raw-vhost-log", action="append")
    parser.add_argument("--csv", action="store_true")
    parser.add_argument("--from-dialect")
    args = parser.parse_args()
    if bool(args.queries) != bool(args.out) or bool(args.queries) == bool(args.job):
        sys.exit("give --queries and --out, or one or more --job QUERIES=OUT")
    jobs = [(args.queries, args.out)] if args.queries else [j.split("=", 1) for j in args.job]
    if args.from_dialect and args.engine != "duckdb":
        sys.exit("--from-dialect is for DuckDB only")
    runs = []
    for queries_file, out in jobs:
        with open(queries_file) as f:
            queries = json.load(f)["queries"]
        if args.from_dialect:
            queries = [translated(q, args.from_dialect) for q in queries]
        os.makedirs(out, exist_ok=True)
        runs.append((queries, out))
    engine = {"duckdb": duckdb_engine, "spark": spark_engine, "clickhouse": clickhouse_engine}[
        args.engine
    ]
    started = time.time()
    raw_logs = [(n, p, False) for n, p in pairs(args.raw_log)]
    raw_logs += [(n, p, True) for n, p in pairs(args.raw_vhost_log)]
    run, stop = engine(pairs(args.view), raw_logs, args.csv)
    print(f"{args.engine}: started in {time.time() - started:.1f} s")
    try:
        for queries, out in runs:
            for q in queries:
                t = time.time()
                rows = run(q["name"], q["sql"], out)
                print(f"{args.engine}: {out}: {q['name']}: {rows} rows in {time.time() - t:.2f} s")
    finally:
        stop()


if __name__ == "__main__":
    main()
