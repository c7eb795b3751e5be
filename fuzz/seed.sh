#!/usr/bin/env bash
# Seeds fuzz/corpus/TARGET/ for every fuzz target from the repository's fixtures
# and, when present, the third-party samples in ../shared/realdata (copied at
# run time into the git-ignored corpus, never committed). Safe to run again:
# existing corpus entries are kept, seeds are rewritten.
#
#   bash fuzz/seed.sh            # from the repository root or anywhere
set -euo pipefail

fuzz=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$fuzz")
fixtures=$root/fixtures
realdata=${RLCTL_REALDATA:-$root/../shared/realdata}
corpus=$fuzz/corpus

mkdir -p "$corpus"/{combined,log_format,nginx_conf,json_lines,units,policy,pipeline,container,columns,haproxy,detect,routes_file,request_paths}

# seed TARGET NAME: stdin into corpus/TARGET/seed-NAME.
seed() {
    cat >"$corpus/$1/seed-$2"
}

# Pieces of a log, at most $2 lines each, from line $3 (small inputs fuzz faster).
head_of() {
    local from=${3:-1}
    local to=$((from + $2 - 1))
    sed -n "${from},${to}p;${to}q" "$1"
}

# The first lines of the bundled combined log, decompressed once.
access=$(mktemp)
trap 'rm -f "$access"' EXIT
(zcat "$fixtures/access.log.gz" || true) | head -n 100010 >"$access"

msec_format='$msec $remote_addr "$request" $status $request_time "$remote_user"'
combined_format='$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"'
main_format="$combined_format"' "$http_x_forwarded_for"'

# combined / common lines
head_of "$access" 20 | seed combined fixture
head_of "$access" 5 100000 | seed combined fixture-429
printf '10.1.1.1 - - [10/Oct/2000:13:55:36 +0000] "POST /login HTTP/1.1" 401 -\n1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200\n' | seed combined common
printf '1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a\\"b HTTP/1.1" 200 1 "-" "x\\"y"\n\n\r\n' | seed combined escaped
printf '1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a HT5.6.7.8 - John Smith [10/Oct/2000:13:55:37 +0000] "GET /b HTTP/1.1" 200 1 "-" "c"\n' | seed combined glued-spaced-user

# log_format: the format on the first line, log lines after it
{ echo "$msec_format"; head_of "$fixtures/msec.log" 20; } | seed log_format msec
{ echo "$combined_format"; head_of "$access" 10; } | seed log_format combined
{ echo '$time_iso8601 $remote_addr $request_method $uri $status $limit_req_status'; printf '2026-01-05T00:00:00+01:00 ::1 GET /x 503 REJECTED\n2026-01-05T00:00:00.5Z 10.0.0.1 POST /y 200 PASSED\n'; } | seed log_format iso
{ echo '$msec$request_method ${uri} $status'; printf '1767571200.5GET /x 200\n'; } | seed log_format adjacent
{ echo '$time_local $remote_addr "$request" $status'; printf '10/Oct/2000:13:55:36 +0000 1.2.3.4 "GET / HTTP/1.1" 200\n'; } | seed log_format time-local-bare

# nginx.conf
cat <<EOF | seed nginx_conf http
http {
    # a comment with log_format inside: log_format nope '\$msec';
    log_format main '$main_format';
    log_format  timed  escape=json
        '{"t":"\$msec","ip":"\$remote_addr",'
        "\"r\":\"\$request\",\"s\":\$status}";
    log_format limits '\$msec \$remote_addr "\$request" \$status \$limit_req_status';
    access_log /var/log/nginx/access.log main;
    server { listen 80; location / { limit_req zone=one burst=5 nodelay; } }
}
EOF
printf "log_format a 'x\\\\'y \$msec' \"\\\\n\";\nlog_format b escape=none '\$time_local';\n" | seed nginx_conf escapes

# JSON lines: the --field mapping on the first line
{ echo ''; head_of "$fixtures/access.json.log" 20; } | seed json_lines fixture
{ echo 'time=when,client=who.ip,path=req.uri'; printf '{"when":"2026-01-05T00:00:00Z","who":{"ip":"10.0.0.1"},"req":{"uri":"/a?b"},"status":200}\n{"when":1767571200123,"who":[{"ip":"::1"}],"status":"429"}\n'; } | seed json_lines mapping
{ echo 'client=client.ip'; printf '{"msec":"1767571210.500","client.ip":"10.0.0.1","request":"GET /a HTTP/1.1","status":200,"request_time":"1.250"}\n{"time_local":"05/Jan/2026:00:00:10 +0000","client":{"ip":"10.0.0.2"},"request":"GET /b HTTP/1.1","status":200,"request_time":2.5}\n{"records":[{"time":"2026-01-05T00:00:00Z"}]}\n'; } | seed json_lines nginx-times
{ echo 'time=StartUTC'; printf '{"StartUTC":"2026-01-05T00:00:00.123456789Z","ClientHost":"10.0.0.1","RequestMethod":"GET","RequestPath":"/x","DownstreamStatus":200}\n'; } | seed json_lines traefik

# limits and durations
for v in 600/1m 10r/s 10r/m 10/s 5000/1h 1/1d '  7 / 2 minutes ' 1m 90s 1h 1d sec 4294967295s 18446744073709551615/1s; do
    printf '%s' "$v" | seed units "$(printf '%s' "$v" | tr -c 'a-zA-Z0-9' _)"
done

# policies
cat <<'EOF' | seed policy readme
[[rule]]
name = "global"
key = "ip"
limit = "1136/1m"
burst = 190
algorithm = "token-bucket"

[[rule]]
name = "post-login"
method = "POST"
route = "^/login$"
key = "ip+user"
limit = "36/1m"
burst = 6
algorithm = "leaky-bucket"

[[rule]]
name = "search"
route = "^/api/search"
key = "field:http_x_api_key"
limit = "10r/s"
algorithm = "sliding-log"
EOF

# the whole pipeline: the first byte picks the format (0 auto, 1 combined,
# 2 json, 3 the msec log_format; +4 for --strict), the rest is the file
{ printf '\x00'; head_of "$access" 20; } | seed pipeline auto-combined
{ printf '\x00'; head_of "$fixtures/access.json.log" 10; } | seed pipeline auto-json
{ printf '\x03'; head_of "$fixtures/msec.log" 10; } | seed pipeline msec
{ printf '\x00'; head_of "$access" 10 | gzip -c; } | seed pipeline gzip
if command -v zstd >/dev/null; then
    { printf '\x00'; head_of "$access" 10 | zstd -q -c; } | seed pipeline zstd
fi
{ printf '\x04'; head_of "$access" 5; printf 'bad line\n'; } | seed pipeline strict

# routes files (one template per line) and --route rules (REGEX=NAME, @HOST REGEX=NAME)
printf '# rlctl routes\n/api/orders/:id  # 4112 paths, e.g. /api/orders/4f9c2a1e\n/api/orders/search\n/static/app.:hash.js\n/blog/:slug\n/\n' | seed routes_file templates
printf '^/api/search=search\n@api.example.com ^/v1/=v1\n@Example.COM:8080 ^/$=home\n' | seed routes_file rules

# request paths as gateways read them: escapes, merged slashes, dot segments, origins
i=0
for p in '/api//search' '/api/%73earch' '/a/./b/../c' '/%2e%2e/x' '/a%2F%2fb' '/100%25' '/a%3Fb' 'HTTP://h:8080/a' 'http://h?q=/a' '/a%zz' '/caf%C3%A9'; do
    printf '%s' "$p" | seed request_paths "$i"
    i=$((i + 1))
done

# the named sources' hand-written fixtures: detection takes any of them; the
# columns target's first byte picks alb (0), cloudfront (1) or w3c (2)
for f in "$fixtures"/sources/*.log; do
    name=$(basename "$f" .log)
    seed detect "$name" <"$f"
done
{ printf '\x00'; cat "$fixtures/sources/alb.log"; } | seed columns alb
{ printf '\x01'; cat "$fixtures/sources/cloudfront.log"; } | seed columns cloudfront
{ printf '\x02'; cat "$fixtures/sources/iis.log"; } | seed columns iis
# W3C time without date: the #Date: lines date it, in order
w3c_by_directives='#Version: 1.0\n#Date: 2026-01-05 23:59:00\n#Fields: time c-ip cs-method cs-uri-stem sc-status time-taken\n23:59:58 192.0.2.1 GET /a 200 5\n00:00:01 192.0.2.1 GET /b 200 5\n23:59:59 192.0.2.2 GET /a 200 5\n#Date: 07-Jan-1996 10:00\n10:00 192.0.2.2 GET /c 200 0\n'
{ printf '\x02'; printf "$w3c_by_directives"; } | seed columns w3c-by-directives
{ printf '\x00'; printf "$w3c_by_directives"; } | seed pipeline w3c-by-directives
{ printf '\x00'; cat "$fixtures/sources/haproxy.log"; } | seed haproxy fixture
# container wrappers: the first byte picks CRI (even) or Docker (odd), combined (bit 1 clear) or JSON
{ printf '\x00'; head_of "$access" 5 | sed 's/^/2026-01-05T00:00:00.123456789Z stdout F /'; printf '2026-01-05T00:00:00Z stdout P 1.2.3.4 - -\n'; } | seed container cri
{ printf '\x03'; printf '{"log":"{\\"ts\\":1767571200.5,\\"request\\":{\\"uri\\":\\"/\\"},\\"status\\":0}\\n","stream":"stdout","time":"2026-01-05T00:00:00Z"}\n'; } | seed container docker

if [[ -d "$realdata" ]]; then
    for f in "$realdata"/*access* "$realdata"/elastic_*; do
        [[ -f "$f" ]] || continue
        name=$(basename "$f")
        head_of "$f" 30 | seed combined "real-$name"
        { printf '\x00'; head_of "$f" 30; } | seed pipeline "real-$name"
        { echo "$main_format"; head_of "$f" 10; } | seed log_format "real-$name"
    done
    for f in "$realdata"/*caddy*; do
        name=$(basename "$f")
        { echo ''; cat "$f"; } | seed json_lines "real-$name"
        { printf '\x00'; cat "$f"; } | seed pipeline "real-$name"
    done
else
    echo "seed.sh: $realdata not found: seeding from fixtures only" >&2
fi

for t in "$corpus"/*/; do
    printf '%-12s %4d files\n' "$(basename "$t")" "$(find "$t" -type f | wc -l)"
done
