/**
 * Read-after-write pairs under load, in a process of its own: each of `connections` clients sends a
 * write and then a read, again and again, for `seconds` (autocannon's request sequence). Prints JSON:
 * pairs/s, p50/p99 of each request, failures. Argument: JSON { url, connections, seconds, write, read }.
 */
import autocannon from 'autocannon';

interface Step {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

const { url, connections, seconds, write, read } = JSON.parse(process.argv[2]!) as { url: string; connections: number; seconds: number; write: Step; read: Step };
const result = await autocannon({ url, connections, duration: seconds, requests: [write, read] });
process.stdout.write(
  JSON.stringify({
    pairs: result.requests.average / 2,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failed: result.non2xx + result.errors,
  }),
);
