/** The first revision of the stateless era (per-request `_meta`, cache hints on results). */
export const FIRST_MODERN_PROTOCOL = '2026-07-28';

/** Revisions are dates, so they compare as strings (as the SDK compares them). */
export function isModernProtocol(version: string | null | undefined): boolean {
  return version !== null && version !== undefined && version >= FIRST_MODERN_PROTOCOL;
}
