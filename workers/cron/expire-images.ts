import { Op } from 'sequelize';
import { Image } from '../../shared/db/models';
import { imageStorage } from '../../shared/storage';
import { imageNow } from '../../shared/images/clock';
import { logger } from '../../shared/logger';

/**
 * Deletes the bytes and rows of images past their expiry, in batches. The API already refuses an
 * expired id, so this only reclaims space; a byte deletion that fails keeps the row for the next run.
 * `now` is injectable so tests can sweep "seven days later".
 */
export async function expireImages(now: number = imageNow(), batch = 500): Promise<number> {
  const storage = imageStorage();
  let removed = 0;
  for (;;) {
    const due = await Image.findAll({ where: { expiresAt: { [Op.lte]: new Date(now) } }, limit: batch, order: [['expiresAt', 'ASC']] });
    if (due.length === 0) return removed;
    const gone: string[] = [];
    for (const img of due) {
      try {
        await storage.delete(img.storageKey);
        gone.push(img.id);
      } catch (err) {
        logger.warn({ err, image: img.id }, 'could not delete expired image bytes; will retry');
      }
    }
    if (gone.length === 0) return removed;
    removed += await Image.destroy({ where: { id: gone } });
    if (due.length < batch) return removed;
  }
}
