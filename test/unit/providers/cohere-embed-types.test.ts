import http from 'http';
import { expect } from 'chai';
import { embed } from '../../../workers/providers/cohere/embed';
import { CancelSource } from '../../../shared/cancel-source';
import { ApiError } from '../../../shared/errors/ApiError';

/** A local Cohere upstream answering `embeddings` for every call; records the bodies sent. */
async function cohereUpstream(embeddings: Record<string, unknown>): Promise<{ url: string; sent: unknown[]; close(): Promise<void> }> {
  const sent: unknown[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c)).on('end', () => {
      sent.push(JSON.parse(raw));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'x', embeddings, texts: ['a'], meta: { billed_units: { input_tokens: 3 } }, response_type: 'embeddings_by_type' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, sent, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const call = (baseUrl: string) => ({ baseUrl, apiKey: 'k', upstreamModel: 'embed-v4.0', signal: new CancelSource(), deadline: Date.now() + 10_000, retries: 0 });
const asked = (types: Array<'float' | 'int8' | 'uint8' | 'binary' | 'ubinary' | 'base64'>) => ({ input: ['a'], encodingFormat: 'float' as const, embeddingTypes: types });

/** workers/providers/cohere/embed.ts: the types a `/v2/embed` request asks of a Cohere upstream, and the checks on what it sends back. */
describe('cohere embed adapter: embedding_types', () => {
  it("asks for float and every other type, and carries the upstream's typed embeddings as sent", async () => {
    const up = await cohereUpstream({ float: [[0.5, -0.5]], int8: [[64, -64]], ubinary: [[128]], base64: ['AAAAPwAAAL8='] });
    try {
      const out = await embed(call(up.url), asked(['int8', 'ubinary', 'base64']), 'm');
      expect((up.sent[0] as { embedding_types: string[] }).embedding_types).to.deep.equal(['float', 'int8', 'ubinary', 'base64']);
      expect(out.response.by_type).to.deep.equal({ int8: [[64, -64]], ubinary: [[128]], base64: ['AAAAPwAAAL8='] });
      expect(out.upstreamTokens).to.equal(3);
      const plain = await embed(call(up.url), asked(['float']), 'm');
      expect((up.sent[1] as { embedding_types: string[] }).embedding_types).to.deep.equal(['float']);
      expect(plain.response).not.to.have.property('by_type');
    } finally {
      await up.close();
    }
  });

  it('a typed answer missing, short, or out of its range is an upstream_error (502)', async () => {
    const cases: Array<[Record<string, unknown>, 'int8' | 'uint8' | 'binary' | 'base64']> = [
      [{ float: [[0.5]] }, 'int8'],
      [{ float: [[0.5]], int8: [] }, 'int8'],
      [{ float: [[0.5]], int8: [[128]] }, 'int8'],
      [{ float: [[0.5]], uint8: [[-1]] }, 'uint8'],
      [{ float: [[0.5]], binary: [[1.5]] }, 'binary'],
      [{ float: [[0.5]], binary: [[]] }, 'binary'],
      [{ float: [[0.5]], base64: [7] }, 'base64'],
    ];
    for (const [embeddings, type] of cases) {
      const up = await cohereUpstream(embeddings);
      try {
        const err = await embed(call(up.url), asked([type]), 'm').then(() => undefined, (e: unknown) => e);
        expect(err, JSON.stringify(embeddings)).to.be.instanceOf(ApiError);
        expect((err as ApiError).status).to.equal(502);
        expect((err as ApiError).message).to.include(`'${type}'`);
      } finally {
        await up.close();
      }
    }
  });
});
