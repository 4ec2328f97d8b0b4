/* report/render_tex.c: LaTeX booktabs tables for papers; the document needs \usepackage{booktabs}.
 *
 * One table float per table, followed by a blank line:
 *
 *   \begin{table}[ht]
 *   \centering
 *   \caption{attention}                       (no \caption when the table has no title)
 *   \begin{tabular}{lrr}
 *   \toprule
 *   impl & seq len & fwd mean (ms) \\
 *   \midrule
 *   naive & 64 & 1.250 \\
 *   sdpa & 64 &  \\                            (empty cells stay empty)
 *   \bottomrule
 *   \end{tabular}
 *   \par\smallskip\footnotesize              (only when the table has notes)
 *   case 5 (sdpa ...): unsupported\par        (one paragraph per note, centred like the table)
 *   \end{table}
 *
 * As in markdown, a column that holds any number is right-aligned ('r'), the rest left ('l'), and
 * numbers are printed with the column's decimals so their points line up; a negative number's
 * sign is a math minus ("$-$1.5"). The header is "name (unit)". Every text that comes from the
 * table (title, names, units, cells, notes) is escaped: the ten LaTeX specials, plus < > | (which
 * print other glyphs in the default OT1 encoding) and [ ] * (which the \\ or \midrule before a
 * row would read as its optional argument or star); line breaks become spaces, other control
 * characters \xHH in text ("\textbackslash{}x1b"); the marks ✓ and ✗ (`report nodes`), which
 * no font has without a package, are the math symbols \surd and \times. */
#include <string.h>

#include "renderers.h"

static void tex_escape(const char *s, struct strbuf *out)
{
	for (; *s; s++) {
		/* the check and cross marks of `report nodes`: no LaTeX font has them without a
		 * package (pdflatex stops on them), so the math symbols \surd and \times */
		if (!strncmp(s, "\u2713", 3) || !strncmp(s, "\u2717", 3)) {
			sb_add(out, s[2] == '\x93' ? "\\ensuremath{\\surd}" : "\\ensuremath{\\times}");
			s += 2;
			continue;
		}
		switch (*s) {
		case '&': case '%': case '$': case '#': case '_': case '{': case '}':
			sb_addc(out, '\\');
			sb_addc(out, *s);
			break;
		case '~': sb_add(out, "\\textasciitilde{}"); break;
		case '^': sb_add(out, "\\textasciicircum{}"); break;
		case '\\': sb_add(out, "\\textbackslash{}"); break;
		case '<': sb_add(out, "\\textless{}"); break;
		case '>': sb_add(out, "\\textgreater{}"); break;
		case '|': sb_add(out, "\\textbar{}"); break;
		case '[': case ']': case '*':
			sb_addc(out, '{');
			sb_addc(out, *s);
			sb_addc(out, '}');
			break;
		case '\n': case '\r': case '\t': sb_addc(out, ' '); break;
		default:
			/* any other control character is shown as escape_controls shows it, \xHH:
			 * raw, it is an invalid character to TeX, and the \x1b escape_controls
			 * would make of it an undefined control sequence */
			if ((unsigned char)*s < 0x20 || *s == 0x7f)
				sb_addf(out, "\\textbackslash{}x%02x", (unsigned char)*s);
			else
				sb_addc(out, *s);
		}
	}
}

static void tex_number(const struct column *col, double value, struct strbuf *out)
{
	struct strbuf text = STRBUF_INIT;
	sb_addf(&text, "%.*f", col->decimals, value);
	const char *digits = sb_str(&text);
	if (digits[0] == '-') {
		sb_add(out, "$-$");
		digits++;
	}
	sb_add(out, digits);
	sb_free(&text);
}

static void tex_table(const struct table *t, struct strbuf *out)
{
	sb_add(out, "\\begin{table}[ht]\n\\centering\n");
	if (t->title) {
		sb_add(out, "\\caption{");
		tex_escape(t->title, out);
		sb_add(out, "}\n");
	}
	sb_add(out, "\\begin{tabular}{");
	for (size_t c = 0; c < t->ncols; c++) {
		int right = 0;
		for (size_t r = 0; r < t->nrows && !right; r++)
			right = t->cells[r * t->ncols + c].kind == CELL_NUMBER;
		sb_addc(out, right ? 'r' : 'l');
	}
	sb_add(out, "}\n\\toprule\n");
	for (size_t c = 0; c < t->ncols; c++) {
		if (c)
			sb_add(out, " & ");
		tex_escape(t->cols[c].name, out);
		if (t->cols[c].unit[0]) {
			sb_add(out, " (");
			tex_escape(t->cols[c].unit, out);
			sb_addc(out, ')');
		}
	}
	sb_add(out, " \\\\\n\\midrule\n");
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			const struct cell *cl = &t->cells[r * t->ncols + c];
			if (c)
				sb_add(out, " & ");
			if (cl->kind == CELL_TEXT)
				tex_escape(cl->text, out);
			else if (cl->kind == CELL_NUMBER)
				tex_number(&t->cols[c], cl->value, out);
		}
		sb_add(out, " \\\\\n");
	}
	sb_add(out, "\\bottomrule\n\\end{tabular}\n");
	if (t->nnotes)
		sb_add(out, "\\par\\smallskip\\footnotesize\n");
	for (size_t i = 0; i < t->nnotes; i++) {
		tex_escape(t->notes[i], out);
		sb_add(out, "\\par\n");
	}
	sb_add(out, "\\end{table}\n\n");
}

const struct renderer render_tex = {.table = tex_table};
