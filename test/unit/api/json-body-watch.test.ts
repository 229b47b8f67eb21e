import { expect } from 'chai';
import express from 'express';
import type { AddressInfo } from 'net';
import type { Server } from 'http';
import { jsonBody, rawLacksWatched } from '../../../api/middleware/body';

/**
 * jsonBody's `watch`: a route learns from the raw bytes that the parsed body cannot hold a text (the
 * messages native bypass's `file_id`, api/routes/messages/shared-account-ids.ts), so it does not walk
 * the body for it. Only bytes that cannot spell it otherwise are trusted: UTF-8 without a `\u` escape.
 */
describe('json body: a watched text absent from the raw bytes', () => {
  let server: Server;
  let base = '';
  before(async () => {
    const app = express();
    app.post('/watched', jsonBody('1mb', 'file_id'), (req, res) => void res.json({ lacks: rawLacksWatched(req) }));
    app.post('/plain', jsonBody('1mb'), (req, res) => void res.json({ lacks: rawLacksWatched(req) }));
    server = app.listen(0, '127.0.0.1');
    await new Promise((ok) => server.once('listening', ok));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((ok) => server.close(ok)));

  const lacks = async (body: string | Buffer, path = '/watched', type = 'application/json') => {
    const r = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': type }, body });
    expect(r.status).to.equal(200);
    return ((await r.json()) as { lacks: boolean }).lacks;
  };

  it('noted when the UTF-8 bytes hold neither the text nor a \\u escape', async () => {
    expect(await lacks(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', data: 'aGk=' } }] }] }))).to.equal(true);
  });

  it('not noted when the text is there (a key or a value), or may be spelled with an escape', async () => {
    expect(await lacks(JSON.stringify({ source: { type: 'file', file_id: 'file_1' } }))).to.equal(false);
    expect(await lacks(JSON.stringify({ text: 'what is a file_id?' }))).to.equal(false);
    expect(await lacks('{"source":{"type":"file","file\\u005fid":"file_1"}}')).to.equal(false);
    expect(await lacks('{"text":"caf\\u00e9"}')).to.equal(false);
  });

  it('not noted for another charset (UTF-16: its bytes are not read), nor without a watch', async () => {
    expect(await lacks(Buffer.from('{"a":1}', 'utf16le'), '/watched', 'application/json; charset=utf-16le')).to.equal(false);
    expect(await lacks(JSON.stringify({ a: 1 }), '/plain')).to.equal(false);
  });
});
