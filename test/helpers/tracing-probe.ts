/**
 * A web pod and a chat worker in one process of their own, serving one chat request, then printing
 * which `@opentelemetry` modules that process loaded (test/integration/tracing). Run from dist/ with
 * the test's environment and PROBE_KEY (an inference key).
 */
import path from 'path';
import type { AddressInfo } from 'net';
import { startWeb } from '../../api/server';
import { startPools } from '../../workers/main';
import { closeDb, db } from '../../shared/db/sequelize';

async function main(): Promise<void> {
  db(); // what the process's preflight does first
  const web = await startWeb(0);
  const pools = await startPools(['chat']);
  const port = (web.server.address() as AddressInfo).port;
  const r = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'SERVICE-API-KEY': process.env.PROBE_KEY ?? '', 'content-type': 'application/json', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'probe' }] }),
  });
  const body = await r.text();
  const marker = `${path.sep}@opentelemetry${path.sep}`;
  const loaded = Object.keys(require.cache).filter((k) => k.includes(marker));
  process.stdout.write(`${JSON.stringify({ status: r.status, body: r.status === 200 ? undefined : body, traceresponse: r.headers.get('traceresponse'), loaded })}\n`);
  await pools.close();
  await web.close();
  await closeDb();
  process.exit(0);
}

main().catch((err) => {
  process.stdout.write(`${JSON.stringify({ error: String(err) })}\n`);
  process.exit(1);
});
