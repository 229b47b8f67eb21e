import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { usageSettled } from '../../helpers/usage';
import { db } from '../../../shared/db/sequelize';
import { UsageEvent } from '../../../shared/db/models';

type Row = Record<string, unknown>;

/** Every request log row of a request id, once the outbox is drained. */
async function rowsOf(requestId: string): Promise<Row[]> {
  await usageSettled();
  return db().query<Row>('SELECT * FROM request_logs WHERE request_id = :requestId', { type: QueryTypes.SELECT, replacements: { requestId } });
}

/** The one row of a request that ran no job: its status, no tokens, no cost, no usage event. */
async function joblessRow(requestId: string | null, o: TestOrg, route: string, dialect: string): Promise<Row> {
  expect(requestId, 'x-service-request-id').to.be.a('string');
  const rows = await rowsOf(requestId!);
  expect(rows, `rows of ${route}`).to.have.length(1);
  expect(rows[0]).to.deep.include({
    org_id: o.org.id, api_key_id: o.keyId, route, dialect, status: 200, error_code: null, lane: null,
    input_tokens: 0, output_tokens: 0, cached_tokens: null, reasoning_tokens: null, attempts: 0, stream: false,
  });
  expect(Number(rows[0].cost_micros)).to.equal(0);
  expect(Number(rows[0].total_ms)).to.be.at.least(0);
  expect(await UsageEvent.count({ where: { requestId: requestId! } }), 'nothing billed').to.equal(0);
  return rows[0];
}

describe('request log: a row for requests that run no job', () => {
  let o: TestOrg;
  let openai: OpenAI;
  let anthropic: Anthropic;
  before(async () => {
    o = await buildOrg(env().redis);
    openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
  });
  beforeEach(resetSim);

  it('GET /v1/models (official OpenAI SDK): status 200, no tokens, no cost', async () => {
    const { data, response } = await openai.models.list().withResponse();
    expect(data.data.length).to.be.above(0);
    await joblessRow(response.headers.get('x-service-request-id'), o, '/v1/models', 'openai');
  });

  it('count_tokens (official Anthropic SDK): the anthropic dialect, the model, no tokens billed', async () => {
    const { data, response } = await anthropic.messages.countTokens({ model: 'sim-claude', messages: [{ role: 'user', content: 'count me' }] }).withResponse();
    expect(data.input_tokens).to.be.above(0);
    const row = await joblessRow(response.headers.get('x-service-request-id'), o, '/v1/messages/count_tokens', 'anthropic');
    expect(row.model).to.equal('sim-claude');
  });

  it('a stored response read: its row; the create that ran a job has one row, its usage record\'s', async () => {
    const { data: created, response: cr } = await openai.responses.create({ model: 'sim-chat', input: 'store me', store: true }).withResponse();
    const createRows = await rowsOf(cr.headers.get('x-service-request-id')!);
    expect(createRows).to.have.length(1);
    expect(createRows[0]).to.deep.include({ route: '/v1/responses', status: 200, lane: 'interactive' });
    expect(Number(createRows[0].input_tokens)).to.be.above(0);

    const { data: read, response: rr } = await openai.responses.retrieve(created.id).withResponse();
    expect(read.id).to.equal(created.id);
    await joblessRow(rr.headers.get('x-service-request-id'), o, `/v1/responses/${created.id}`, 'openai-responses');
  });
});
