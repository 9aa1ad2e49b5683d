/** One entry of a commit's tree, as data (blobs, symlinks, submodules; folders are implied by paths). */
export interface TreeEntry {
  path: string;
  type: 'file' | 'symlink' | 'submodule';
  /** Blob id (files, symlinks) or commit id (submodules). */
  id: string;
  executable?: boolean;
  /** A symlink's target text, read from its blob. */
  target?: string;
  /**
   * The blob's size from its header, where a listing gave it (the cli backend's `git ls-tree -l`, for a blob the
   * store held then); the index asks the backend for the others.
   */
  size?: number;
}
