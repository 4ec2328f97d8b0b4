/* report/render_summary.c: markdown for a pull-request comment or a CI job summary (GitHub,
 * GitLab): each table as markdown, its notes folded in a <details> block under it, so that what
 * leads (the verdict the command puts first) stays short. */
#include "escape.h"
#include "renderers.h"

static void summary_table(const struct table *t, struct strbuf *out)
{
	struct table bare = *t;   /* the same table without its notes, which follow folded */
	bare.nnotes = 0;
	render_md.table(&bare, out);
	if (!t->nnotes)
		return;
	sb_add(out, "<details><summary>notes</summary>\n\n");
	for (size_t i = 0; i < t->nnotes; i++) {
		sb_add(out, "- ");
		sb_add_inline(out, t->notes[i], 0);
		sb_addc(out, '\n');
	}
	sb_add(out, "\n</details>\n\n");
}

const struct renderer render_summary = {.table = summary_table};
