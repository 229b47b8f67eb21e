import { expect } from 'chai';
import { env, resetSim } from '../helpers/harness';
import { buildOrg, type TestOrg } from '../helpers/factories';
import { claude, codex, RUN_MS } from '../helpers/coding-agents';
import { RoutingPlan } from '../../shared/db/models';
import { bumpEpoch } from '../../shared/cache/epoch';

const upstreamPaths = () => new Set(env().sim.log.entries.map((e) => e.path));

/** Claude Code and Codex CLI, as their users install them, against the test gateway (issue 27 §3). */
describe('coding agents end to end (claude -p, codex exec)', function () {
  this.timeout(2 * RUN_MS + 30_000);
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
  });

  for (const [model, upstream] of [
    ['sim-claude', '/v1/messages'],
    ['sim-chat', '/v1/chat/completions'],
  ] as const) {
    it(`claude -p completes on ${model} (upstream ${upstream})`, async () => {
      const r = await claude(model, o.key, 'Greet the gateway e2e run');
      expect(r.code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).to.equal(0);
      expect(r.stdout).to.include('Simulated reply:');
      expect([...upstreamPaths()]).to.deep.equal([upstream]);
    });

    it(`codex exec completes on ${model} (upstream ${upstream})`, async () => {
      const r = await codex(model, o.key, 'Greet the gateway e2e run');
      expect(r.code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).to.equal(0);
      expect(r.stdout).to.include('Simulated reply:');
      expect(r.stdout).to.include('Greet the gateway e2e run');
      expect([...upstreamPaths()]).to.deep.equal([upstream]);
    });
  }

  it('codex exec completes on a model id Codex knows (gpt-5.5, a routing-plan alias of sim-chat): custom apply_patch and a client tool search', async () => {
    const plan = await RoutingPlan.create({ orgId: o.org.id, name: 'codex-plan', modelMap: { 'gpt-5.5': 'sim-chat' }, projectId: null } as never);
    await bumpEpoch(env().redis);
    const r = await codex('gpt-5.5', o.key, 'Greet the gateway e2e run', { base: `${env().gw.url}/r/${plan.id}` });
    expect(r.code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).to.equal(0);
    expect(r.stdout).to.include('Simulated reply:');
    const sent = env().sim.log.entries.map((e) => e.body as { tools?: Array<{ function: { name: string } }> });
    expect(sent).to.have.length(1);
    expect(sent[0].tools!.map((t) => t.function.name)).to.include.members(['apply_patch', 'tool_search', 'web_search']);
  });
});
