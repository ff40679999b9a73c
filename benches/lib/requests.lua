-- wrk script: requests taken in order from a file, one per line (benches/graphs.sh). From the
-- environment: BENCH_REQUESTS (the file), BENCH_METHOD ("GET": each line is a path; "POST":
-- each line is a body for wrk's URL) and BENCH_THREADS (wrk's -t). Thread i sends lines i,
-- i + threads, i + 2 * threads, ..., wrapping around, so every run starts with the same items
-- as the PostgreSQL side (pgbench walks the same list by client id).
local method = os.getenv("BENCH_METHOD") or "POST"
local threads = tonumber(os.getenv("BENCH_THREADS") or "1")
local lines = {}
for line in io.lines(os.getenv("BENCH_REQUESTS")) do
  lines[#lines + 1] = line
end
local created = 0
local next_line = 0

function setup(thread)
  thread:set("id", created)
  created = created + 1
end

function init(args)
  next_line = id or 0
end

wrk.method = method
wrk.headers["Content-Type"] = "application/json"

request = function()
  local line = lines[next_line % #lines + 1]
  next_line = next_line + threads
  if method == "GET" then
    return wrk.format(nil, line)
  end
  return wrk.format(nil, nil, nil, line)
end
