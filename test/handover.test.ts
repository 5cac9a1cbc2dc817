// The preflight's outcome reaches the suites' worker after the worker started (suites/handover.ts):
// once, to the holder of the key, as long as the preflight takes; a setup error withdraws it.
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { offerHandover, receiveHandover, type Handover } from '../suites/handover.ts';

const HANDOVER: Handover = {
  tokens: { full: { token: 'eyJ.full.token', expiresAt: Date.now() + 60_000 } as never },
  tenant: null,
  notServed: ['updateSession'],
  deletedProfiles: [],
  tokenUrls: ['https://tenant.example.com/oauth/token'],
};

describe('the handover of the preflight to the suites', () => {
  it('the worker waits for it, however long the preflight takes, and gets it whole', async () => {
    const offer = await offerHandover();
    try {
      expect(offer.address.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
      let received = false;
      const receiving = receiveHandover(offer.address).then((h) => {
        received = true;
        return h;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(received).toBe(false);
      offer.give(HANDOVER);
      expect(await receiving).toEqual(HANDOVER);
    } finally {
      await offer.close();
    }
  });

  it('only to the key it was offered with, and only once', async () => {
    const offer = await offerHandover();
    try {
      offer.give(HANDOVER);
      for (const authorization of [undefined, 'Bearer wrong', `Bearer ${offer.address.key}x`, offer.address.key]) {
        const answer = await request(offer.address.url, authorization ? { headers: { authorization } } : {});
        await answer.body.dump();
        expect(answer.statusCode, String(authorization)).toBe(403);
      }
      await expect(receiveHandover({ ...offer.address, key: 'guessed' })).rejects.toThrow();
      expect(await receiveHandover(offer.address)).toEqual(HANDOVER);
      await expect(receiveHandover(offer.address)).rejects.toThrow();
    } finally {
      await offer.close();
    }
  });

  it('withdrawn (a setup error) or closed before it was given: the worker is told, and gets no tokens', async () => {
    const withdrawn = await offerHandover();
    const waiting = receiveHandover(withdrawn.address);
    withdrawn.withdraw('the run ended in a setup error');
    await expect(waiting).rejects.toThrow('the suites did not run: the run ended in a setup error');
    await withdrawn.close();

    const closed = await offerHandover();
    const stillWaiting = receiveHandover(closed.address).then(
      () => 'received',
      (error: Error) => error.message,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    await closed.close();
    expect(await stillWaiting).toBe('the suites did not run: the run ended');
  });
});

describe("the worker's progress reports", () => {
  it('are taken from the key holder as often as they come, after the handover too; refused without the key', async () => {
    const reports: unknown[] = [];
    const offer = await offerHandover((report) => reports.push(report));
    try {
      offer.give(HANDOVER);
      const url = new URL('/progress', offer.address.url).href;
      const post = async (authorization: string, body: unknown) => {
        const answer = await request(url, { method: 'POST', headers: { authorization }, body: JSON.stringify(body) });
        await answer.body.dump();
        return answer.statusCode;
      };
      const report = { requests: 12, pacer: { limit: 5, windowMs: 1000, waitMs: 300 } };
      expect(await post(`Bearer ${offer.address.key}`, report)).toBe(204);
      expect(await post(`Bearer ${offer.address.key}`, { ...report, requests: 13 })).toBe(204);
      expect(await post('Bearer wrong', { ...report, requests: 99 })).toBe(403);
      // Not a report: dropped.
      expect(await post(`Bearer ${offer.address.key}`, { requests: 'many' })).toBe(204);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(reports).toEqual([report, { ...report, requests: 13 }]);
    } finally {
      await offer.close();
    }
  });
});
