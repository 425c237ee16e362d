/**
 * The dispatch bench's receiver, run as a child process so it has a core of its own: a keep-alive
 * `node:http` server on 127.0.0.1 (port 0) that prints `{"port":N}` on stdout once listening.
 *
 * Every POST body is read in full and answered 200 with an empty body. It counts requests, bytes
 * and records without parsing JSON: the bench's records are flat objects whose strings hold no
 * `{`, so a record is one `{` byte. `POST /parse` does what a real endpoint does at least, a
 * `JSON.parse` of the body, and counts the records parsed. `GET /stats` answers those counters and the receiver's own
 * CPU time, as JSON. The process exits when its stdin closes (the bench ending, or dying).
 *
 * node --import tsx bench/support/receiver.ts
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

const OPEN_BRACE = 0x7b;
const counters = { requests: 0, bytes: 0, records: 0 };

function countRecords(chunk: Buffer): number {
  let count = 0;
  for (let at = chunk.indexOf(OPEN_BRACE); at !== -1; at = chunk.indexOf(OPEN_BRACE, at + 1)) count++;
  return count;
}

const server = createServer({ keepAliveTimeout: 60_000, requestTimeout: 0, headersTimeout: 60_000 }, (req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    const cpu = process.cpuUsage();
    const body = JSON.stringify({ ...counters, cpuMs: (cpu.user + cpu.system) / 1000 });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  counters.requests++;
  if (req.url === '/parse') {
    parseBody(req, res);
    return;
  }
  req.on('data', (chunk: Buffer) => {
    counters.bytes += chunk.byteLength;
    counters.records += countRecords(chunk);
  });
  req.on('end', () => {
    res.writeHead(200, { 'content-length': 0 });
    res.end();
  });
});

/** `POST /parse`: what a real endpoint does at least, `JSON.parse` of the whole body; records counted from the result. */
function parseBody(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => {
    counters.bytes += chunk.byteLength;
    chunks.push(chunk);
  });
  req.on('end', () => {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    counters.records += Array.isArray(parsed) ? parsed.length : 1;
    res.writeHead(200, { 'content-length': 0 });
    res.end();
  });
}
server.keepAliveTimeout = 60_000;
server.maxRequestsPerSocket = 0;

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the receiver has no TCP address');
  process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
});

process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
