//! The three-way text merge `alpha update`, `alpha generate` and the runtime's server part use
//! on a tool-owned file the user changed, and the test for the conflict blocks it leaves.

/// Whether `text` holds a conflict block as [`merge`] writes it: a `<<<<<<< ours` line
/// followed later by a `>>>>>>> theirs` line.
pub fn has_conflict_markers(text: &str) -> bool {
    let mut open = false;
    for line in text.lines() {
        if line == "<<<<<<< ours" {
            open = true;
        } else if open && line == ">>>>>>> theirs" {
            return true;
        }
    }
    false
}

/// The three-way merge of `ours` (the file on disk) and `theirs` (the new text) against
/// `base` (what rsbuilder wrote before), by diffy with `git merge-file`'s diff3 conflict
/// style. `Ok`: merged cleanly; `Err`: the text with conflict blocks.
pub fn merge(base: &str, ours: &str, theirs: &str) -> Result<String, String> {
    let mut opts = diffy::MergeOptions::new();
    opts.set_conflict_style(diffy::ConflictStyle::Diff3)
        .set_incomplete_hunk_style(diffy::IncompleteHunkStyle::Git);
    opts.merge(base, ours, theirs)
}
