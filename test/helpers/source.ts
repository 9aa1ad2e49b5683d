import { type CatalogReader, EVERY_SOURCE } from '../../src/catalog/index.ts';
import { verifiedReader } from '../../src/mcp/read.ts';
import { createServingOwner, type ServingOwner } from '../../src/mcp/serving.ts';
import { type CatalogSkillSource, catalogSkillSource } from '../../src/mcp/source.ts';
import { silentLogger } from '../../src/shared/logger.ts';

/** The skill source over `catalog` as a caller who sees every source is served, and the owner behind it. */
export function sourceOver(
  catalog: CatalogReader,
  pageSize?: number,
): { source: CatalogSkillSource; owner: ServingOwner } {
  const owner = createServingOwner(catalog, { pageSize });
  const source = catalogSkillSource(() => owner.at(EVERY_SOURCE), { read: verifiedReader(silentLogger()) });
  return { source, owner };
}
