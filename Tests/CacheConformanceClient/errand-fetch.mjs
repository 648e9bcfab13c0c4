// Runs cache-tests.fyi's client (the HTTP cache conformance suite) as a browser would run it,
// with each test request answered by ErrandCacheConformance, so that the suite judges Errand's
// cache; the suite's own calls to its server (/config, /state) keep node's fetch. Prints the
// results as the suite's CLI does: a JSON object of test id → true or [kind, message].
//
//   node errand-fetch.mjs <cache-tests checkout> <its server's base URL> <ErrandCacheConformance>
//   CACHE_TEST=<test id> node errand-fetch.mjs …   # one test, with each exchange printed
import { spawn } from 'node:child_process'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { pathToFileURL } from 'node:url'

const [checkout, baseUrl, binary] = process.argv.slice(2)
const errand = spawn(binary, [], { stdio: ['pipe', 'pipe', 'inherit'] })
const pending = new Map()
let nextId = 1
createInterface({ input: errand.stdout }).on('line', line => {
  const answer = JSON.parse(line)
  const settle = pending.get(answer.id)
  pending.delete(answer.id)
  settle(answer)
})

const nodeFetch = globalThis.fetch
globalThis.fetch = async (url, init = {}) => {
  const href = typeof url === 'string' ? url : url.href
  if (!new URL(href).pathname.startsWith('/test/')) return nodeFetch(url, init)
  const headers = Array.isArray(init.headers) ? [...init.headers] : Object.entries(init.headers ?? {})
  // Fetch's "no-cache" mode is a request that revalidates: the fetch standard sends it as
  // `Cache-Control: max-age=0`, which is what an Errand caller writes for the same.
  if (init.cache === 'no-cache' && !headers.some(([name]) => name.toLowerCase() === 'cache-control')) {
    headers.push(['Cache-Control', 'max-age=0'])
  }
  const method = (init.method ?? 'GET').toUpperCase()
  const id = nextId++
  const answer = await new Promise(resolve => {
    pending.set(id, resolve)
    errand.stdin.write(JSON.stringify({ id, url: href, method, headers, body: init.body ?? null }) + '\n')
  })
  // As fetch does: no response is a TypeError.
  if (answer.error !== null && answer.error !== undefined) throw new TypeError(answer.error)
  const hasNoBody = [204, 205, 304].includes(answer.status) || method === 'HEAD'
  // The constructor takes 200–599 only, where a network response may have any three digits (the
  // suite's server answers 999 when it expected a conditional request): set it afterwards.
  const constructible = answer.status >= 200 && answer.status <= 599
  const response = new Response(hasNoBody ? null : answer.body, {
    status: constructible ? answer.status : 200,
    headers: answer.headers
  })
  if (!constructible) Object.defineProperty(response, 'status', { value: answer.status })
  return response
}

const { runTests, getResults } = await import(pathToFileURL(path.join(checkout, 'test-engine/client/runner.mjs')))
const { default: tests } = await import(pathToFileURL(path.join(checkout, 'tests/index.mjs')))
// CACHE_TEST=<id> runs that test alone, with the suite's dump of each exchange.
const only = process.env.CACHE_TEST
const chosen = only === undefined
  ? tests
  : tests.map(suite => ({ ...suite, tests: suite.tests.filter(test => test.id === only).map(test => ({ ...test, dump: true })) }))
    .filter(suite => suite.tests.length > 0)
await runTests(chosen, true, baseUrl)
errand.stdin.end()
console.log(JSON.stringify(getResults(), null, 2))
