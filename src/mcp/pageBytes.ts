/**
 * skills/list pages answered from bytes serialized once. A page's entries are frozen and the same array for as
 * long as its serving state lives, so their JSON is too (ServingState.entriesBytes); the SDK still builds and serializes the rest of the
 * answer (id, era, `_meta`, cache hints, errors, headers), with the entries left empty, and `fill` puts the
 * page's bytes where the SDK's serializer would have written them. test/http/pageBytes.test.ts holds the
 * answers to the SDK's own, byte for byte.
 */

/** Where a request whose page is spliced in later keeps its bytes until its response is built. */
export interface PageSlot {
  bytes?: Uint8Array;
}

// JSON.stringify writes an empty array as `[]` with no space, and `skills` is the only key of that name in
// a skills/list answer (a result's; the envelope's keys are jsonrpc, id and result).
const KEY = '"skills":';
const EMPTY = `${KEY}[]`;

const slots = new WeakMap<Request, PageSlot>();

/** Marks a 2026-07-28 HTTP request whose skills/list page `fill` will splice into its response. */
export function expectPage(request: Request): PageSlot {
  const slot: PageSlot = {};
  slots.set(request, slot);
  return slot;
}

/** The slot of a request marked by `expectPage`, if it was. */
export const pageSlot = (request: Request | undefined): PageSlot | undefined =>
  request === undefined ? undefined : slots.get(request);

/** The SDK's response with the slot's entries in place of the empty ones; an answer without them as it was. */
export async function fill(response: Response, slot: PageSlot): Promise<Response> {
  if (slot.bytes === undefined) return response;
  const text = await response.text();
  const at = text.indexOf(EMPTY);
  const body =
    at === -1
      ? text
      : Buffer.concat([
          Buffer.from(text.slice(0, at + KEY.length)),
          slot.bytes,
          Buffer.from(text.slice(at + EMPTY.length)),
        ]);
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
