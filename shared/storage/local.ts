import fs from 'fs/promises';
import path from 'path';
import type { BlobStorage } from './storage';

/** Files under one directory; keys are flat names checked to stay inside it. */
export class LocalStorage implements BlobStorage {
  readonly kind = 'local' as const;
  private readonly root: string;

  constructor(dir: string) {
    this.root = path.resolve(dir);
  }

  private file(key: string): string {
    if (!/^[A-Za-z0-9._-]+$/.test(key) || key.startsWith('.')) throw new Error(`Invalid storage key '${key}'.`);
    return path.join(this.root, key);
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    await fs.mkdir(this.root, { recursive: true });
    const target = this.file(key);
    const tmp = `${target}.${process.pid}.tmp`;
    await fs.writeFile(tmp, bytes);
    await fs.rename(tmp, target);
  }

  async get(key: string): Promise<Buffer | undefined> {
    try {
      return await fs.readFile(this.file(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.file(key), { force: true });
  }

  async presignedUrl(): Promise<undefined> {
    return undefined;
  }
}
