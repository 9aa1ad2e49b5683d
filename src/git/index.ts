export {
  describeGitBackend,
  openLocalRepository,
  openStore,
} from './backend.ts';
export { removeIncomplete } from './cleanup.ts';
export { causeOf, GitError } from './errors.ts';
export { DEFAULT_HTTP_TIMEOUT_MS, MAX_OBJECT_BYTES } from './limits.ts';
export { CACHE_USES } from './isomorphic/odb.ts';
export {
  expandCommit,
  listRefsBelow,
  type ResolvedRef,
  resolveLocalRef,
  resolveLocalTarget,
  resolveRemoteRef,
  resolveRemoteTarget,
} from './refs.ts';
export { fetchCommit, type Linked, pinnedTag, unpinCommit } from './remote.ts';
export {
  type FetchProgress,
  pinRef,
  type Remote,
  type RemoteRef,
  type Repository,
  repositoryRootOf,
} from './repository.ts';
export { type Keyring, keyringOf } from './signature/keyring.ts';
export { verifyTarget } from './signature/verify.ts';
export { blobId } from './objects.ts';
export { blobAccess, blobsReader, readBlob, type TreeCache, walkCommit } from './tree.ts';
export { redactUrl } from './url.ts';
export { type WorktreeChange, worktreeChanges } from './worktree.ts';
export { type WorktreeTree, worktreeTree } from './worktreeTree.ts';
export { refetchCommit } from './repair.ts';
export { REVISION_HINT, revParseLocal } from './revParse.ts';
