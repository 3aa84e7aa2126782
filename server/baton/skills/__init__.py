"""Skills (`SKILL.md` folders) and command files: discovery, the catalog block, the
`skill` tool, and slash commands in every face. See docs/skills.md."""
