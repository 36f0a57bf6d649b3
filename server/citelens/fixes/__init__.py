"""Quick fixes as data, with no LSP: which fixes a finding has, and the edits they make
(``lsp/actions.py`` turns them into code actions; ``citelens check`` can offer them too)."""
