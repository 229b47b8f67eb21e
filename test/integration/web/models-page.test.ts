import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { buildWebMember, dashboardAs } from '../../helpers/web-client';
import { Model } from '../../../shared/db/models';

/** The models table: public id → its cells' text (tags dropped, `<br>` as " | "). */
function rows(page: string): Map<string, Record<string, string>> {
  const part = page.split('data-test="models"')[1]?.split('</table>')[0] ?? '';
  const out = new Map<string, Record<string, string>>();
  for (const m of part.matchAll(/<tr data-model="([^"]+)">([\s\S]*?)<\/tr>/g)) {
    const cells: Record<string, string> = {};
    for (const c of m[2].matchAll(/<td data-label="([^"]+)"[^>]*>([\s\S]*?)<\/td>/g)) cells[c[1]] = c[2].replace(/<br>/g, ' | ').replace(/<[^>]+>/g, '').trim();
    out.set(m[1], cells);
  }
  return out;
}

describe('dashboard models page: what the org may call, with prices and limits', () => {
  beforeEach(resetSim);

  it('lists the enabled catalog models its policies allow, prices in USD per 1M tokens / image / audio minute, context, output cap and lanes', async () => {
    // the seeded catalog this test reads (micro-dollars per unit)
    const price = async (id: string) => (await Model.findOne({ where: { publicId: id } }))!.prices;
    expect(await price('sim-chat')).to.deep.equal({ input_token: 0.5, output_token: 1.5 });
    expect(await price('sim-whisper')).to.deep.equal({ audio_second: 100 });
    expect(await price('sim-image')).to.include({ image: 20000, image_256x256: 8000 });

    const open = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 3, 'audio:default': 2 }, entitlements: { background: true } });
    const web = await dashboardAs(await buildWebMember(open.org.id, 'member'));
    const page = await web.get(`/dashboard/o/${open.org.slug}/models`);
    expect(page.status, page.text.slice(0, 300)).to.equal(200);
    expect(page.text).to.include(`href="/dashboard/o/${open.org.slug}/models"`); // the tab
    const all = rows(page.text);
    const enabled = (await Model.findAll({ where: { enabled: true } })).map((m) => m.publicId).sort();
    expect([...all.keys()].sort()).to.deep.equal(enabled);
    expect(all.get('sim-chat')).to.include({
      Prices: '$0.50 / 1M input tokens | $1.50 / 1M output tokens',
      'Context window': '128,000',
      'Max output': '16,384',
      Lanes: 'chat:interactive 3 | chat:background 8',
    });
    expect(all.get('sim-whisper')).to.include({ Prices: '$0.006 / audio minute', Lanes: 'audio:default 2' });
    expect(all.get('sim-image')!.Prices).to.match(/^\$0\.02 \/ image \| \$0\.008 \/ image 256x256 \|/);
    expect(page.text).to.include('-background</code> on the background lane');

    // an org whose policies turn images and decision models off does not see them; no background entitlement, no background lane
    const closed = await buildOrg(env().redis, { plan: 'free', policies: { image_generation: 'off', systemone: 'off' } });
    const web2 = await dashboardAs(await buildWebMember(closed.org.id, 'owner'));
    const closedPage = await web2.get(`/dashboard/o/${closed.org.slug}/models`);
    expect(closedPage.text).not.to.include('on the background lane');
    const limited = rows(closedPage.text);
    const caps = new Map((await Model.findAll({ where: { enabled: true } })).map((m) => [m.publicId, m.capabilities]));
    expect([...limited.keys()].sort()).to.deep.equal(enabled.filter((id) => !caps.get(id)!.image_generation && !caps.get(id)!.decision));
    expect(limited.has('sim-chat')).to.equal(true);
    expect(limited.get('sim-chat')!.Lanes).to.equal('chat:interactive 4'); // the free plan's

    // another org's models page is not this member's
    expect((await web2.get(`/dashboard/o/${open.org.slug}/models`)).status).to.equal(404);
  });
});
