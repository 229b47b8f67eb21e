/**
 * Where image bytes live. One interface, two implementations: the local filesystem (default) and an
 * S3-compatible bucket. Keys are opaque, gateway-chosen names (never caller input).
 */
export interface BlobStorage {
  readonly kind: 'local' | 's3';
  put(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The bytes, or undefined when the object is gone. */
  get(key: string): Promise<Buffer | undefined>;
  /** Deletes the object; deleting a missing object is not an error. */
  delete(key: string): Promise<void>;
  /**
   * A presigned URL that serves the object until `expiresAt` (epoch ms), or undefined when the
   * gateway serves the bytes itself (local storage: see shared/images/signing.ts).
   */
  presignedUrl(key: string, expiresAt: number, contentType: string): Promise<string | undefined>;
}
