-- The wrk script of `storekit bench serve`: a request shape from its arguments, and a JSON report.
--
--   wrk -s wrk-report.lua URL -- METHOD PATH[,PATH…] [BODY]
--
-- One path: the same request over and over (wrk's fast path). Several paths: each connection's
-- requests go round them (purchases spread over several customers). BODY, when given, is sent as
-- JSON. The report is the last line of the output.

local paths = {}
local body = nil
local counter = 0

function init(args)
  wrk.method = args[1] or "GET"
  for path in string.gmatch(args[2] or "/", "[^,]+") do
    table.insert(paths, path)
  end
  if args[3] ~= nil and args[3] ~= "" then
    body = args[3]
    wrk.body = body
    wrk.headers["Content-Type"] = "application/json"
  end
  wrk.path = paths[1]
  if #paths > 1 then
    request = function()
      counter = counter + 1
      return wrk.format(nil, paths[(counter % #paths) + 1])
    end
  end
end

function done(summary, latency, requests)
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"status_errors":%d,"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d,"latency_p50_us":%d}\n',
    summary.requests, summary.duration, summary.errors.status, summary.errors.connect, summary.errors.read,
    summary.errors.write, summary.errors.timeout, latency:percentile(50)))
end
