-- wrk script: one AQL lookup per request, `POST /_api/cursor` with a random bind value
-- (benches/aql.sh). From the environment: BENCH_KEYS (values 0 .. BENCH_KEYS - 1),
-- BENCH_LOOKUP ("a2": `FILTER d.a2 == @v` with an integer, through the persistent index;
-- "key": `FILTER d._key == @k` with "k<n>", through the primary index) and
-- BENCH_COLLECTION. The path comes from wrk's URL (…/_api/cursor).
local keys = tonumber(os.getenv("BENCH_KEYS") or "10000")
local lookup = os.getenv("BENCH_LOOKUP") or "a2"
local coll = os.getenv("BENCH_COLLECTION") or "c"
local started = 0

-- Each thread gets its own seed (wrk runs one Lua state per thread).
function setup(thread)
  started = started + 1
  thread:set("id", started)
end

function init(args)
  math.randomseed(os.time() * 1000 + (id or 0))
end

local prefix, suffix
if lookup == "key" then
  prefix = '{"query":"FOR d IN ' .. coll .. ' FILTER d._key == @k RETURN d","bindVars":{"k":"k'
  suffix = '"}}'
else
  prefix = '{"query":"FOR d IN ' .. coll .. ' FILTER d.a2 == @v RETURN d","bindVars":{"v":'
  suffix = '}}'
end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

request = function()
  return wrk.format(nil, nil, nil, prefix .. math.random(0, keys - 1) .. suffix)
end
