// The window a brotli stream was compressed with, read from its first bits (RFC 7932 §9.1,
// WBITS): the size of the ring buffer its decoder fills (shared/db/packing.ts, brotliOptions).
export function brotliWindowBits(stream: Uint8Array): number {
  const first = stream[0];
  if (first === undefined) throw new Error('an empty stream has no window');
  if ((first & 1) === 0) return 16;
  const wide = (first >> 1) & 7;
  if (wide !== 0) return 17 + wide;
  const narrow = (first >> 4) & 7;
  if (narrow === 1) throw new Error('a large-window stream (not RFC 7932)');
  return narrow === 0 ? 17 : 8 + narrow;
}
