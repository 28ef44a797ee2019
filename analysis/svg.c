/* svg: SVG primitives; see svg.h. */
#include "svg.h"

#include <math.h>

static double frac(double v, double lo, double hi, bool is_log2) {
  if (is_log2)
    return (log2(v) - log2(lo)) / (log2(hi) - log2(lo));
  return (v - lo) / (hi - lo);
}

double ts_svg_x(const ts_svg_frame *f, double x) {
  return f->x0_px + f->w_px * frac(x, f->x_lo, f->x_hi, f->is_x_log2);
}

double ts_svg_y(const ts_svg_frame *f, double y) {
  return f->y0_px + f->h_px * (1 - frac(y, f->y_lo, f->y_hi, f->is_y_log2));
}

void ts_svg_open(FILE *out, int width_px, int height_px, const char *title) {
  fprintf(out,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
          width_px, height_px, width_px, height_px);
  ts_svg_escape(out, title);
  fputs("\">\n<title>", out);
  ts_svg_escape(out, title);
  fputs("</title>\n", out);
}

void ts_svg_close(FILE *out) {
  fputs("</svg>\n", out);
}

void ts_svg_escape(FILE *out, const char *text) {
  for (const char *p = text; *p != '\0'; p++) {
    switch (*p) {
    case '&':
      fputs("&amp;", out);
      break;
    case '<':
      fputs("&lt;", out);
      break;
    case '>':
      fputs("&gt;", out);
      break;
    case '"':
      fputs("&quot;", out);
      break;
    default: /* XML allows no other control character, even escaped */
      fputc((unsigned char)*p < 0x20 && *p != '\t' && *p != '\n' ? '?' : *p, out);
    }
  }
}

void ts_svg_text(FILE *out, double x_px, double y_px, const char *anchor, const char *cls,
                 const char *text) {
  fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"", x_px, y_px, anchor);
  if (cls != NULL)
    fprintf(out, " class=\"%s\"", cls);
  fputc('>', out);
  ts_svg_escape(out, text);
  fputs("</text>\n", out);
}

void ts_svg_rect(FILE *out, double x_px, double y_px, double w_px, double h_px, const char *fill,
                 const char *tooltip) {
  fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"", x_px, y_px,
          w_px, h_px, fill);
  if (tooltip == NULL) {
    fputs("/>\n", out);
    return;
  }
  fputs("><title>", out);
  ts_svg_escape(out, tooltip);
  fputs("</title></rect>\n", out);
}

void ts_svg_line(FILE *out, double x1_px, double y1_px, double x2_px, double y2_px,
                 const char *stroke, double width_px, bool is_dashed) {
  fprintf(out,
          "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
          "stroke-width=\"%.2f\"%s/>\n",
          x1_px, y1_px, x2_px, y2_px, stroke, width_px,
          is_dashed ? " stroke-dasharray=\"6 4\"" : "");
}

static double nice_step(double range, int max_ticks) {
  double raw = range / (max_ticks > 1 ? max_ticks - 1 : 1);
  double mag = pow(10, floor(log10(raw)));
  for (int k = 0; k < 3; k++) {
    static const double mult[] = {1, 2, 5};
    if (mult[k] * mag >= raw)
      return mult[k] * mag;
  }
  return 10 * mag;
}

int ts_svg_ticks(double lo, double hi, bool is_log2, double *ticks, int max_ticks) {
  int n = 0;
  if (!(hi > lo) || max_ticks < 1)
    return 0;
  if (is_log2) {
    double first = pow(2, ceil(log2(lo) - 1e-9)), stride = 1;
    while (log2(hi / first) / stride + 1 > max_ticks)
      stride *= 2;
    for (double t = first; t <= hi * (1 + 1e-9) && n < max_ticks; t *= pow(2, stride))
      ticks[n++] = t;
    return n;
  }
  double step = nice_step(hi - lo, max_ticks);
  for (double t = ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9 && n < max_ticks; t += step)
    ticks[n++] = fabs(t) < step * 1e-9 ? 0 : t;
  return n;
}

double ts_svg_nice_max(double hi) {
  if (!(hi > 0))
    return 1;
  double step = nice_step(hi, 6);
  return ceil(hi / step - 1e-9) * step;
}

void ts_svg_axes(FILE *out, const ts_svg_frame *f, const double *x_ticks, int n_x_ticks,
                 const double *y_ticks, int n_y_ticks, const char *x_title, const char *y_title) {
  char label[32];
  double bottom = f->y0_px + f->h_px;
  for (int i = 0; i < n_y_ticks; i++) {
    double y = ts_svg_y(f, y_ticks[i]);
    ts_svg_line(out, f->x0_px, y, f->x0_px + f->w_px, y, "#dddddd", 1, false);
    snprintf(label, sizeof label, "%.6g", y_ticks[i]);
    ts_svg_text(out, f->x0_px - 6, y + 4, "end", "tick", label);
  }
  for (int i = 0; i < n_x_ticks; i++) {
    double x = ts_svg_x(f, x_ticks[i]);
    ts_svg_line(out, x, bottom, x, bottom + 5, "#444444", 1, false);
    snprintf(label, sizeof label, "%.6g", x_ticks[i]);
    ts_svg_text(out, x, bottom + 18, "middle", "tick", label);
  }
  fprintf(out,
          "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" "
          "stroke=\"#444444\"/>\n",
          f->x0_px, f->y0_px, f->w_px, f->h_px);
  ts_svg_text(out, f->x0_px + f->w_px / 2, bottom + 38, "middle", "axis", x_title);
  fprintf(out,
          "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\" "
          "class=\"axis\">",
          f->x0_px - 48, f->y0_px + f->h_px / 2);
  ts_svg_escape(out, y_title);
  fputs("</text>\n", out);
}

void ts_svg_legend_item(FILE *out, double x_px, double y_px, const char *fill, const char *label) {
  ts_svg_rect(out, x_px, y_px - 10, 12, 12, fill, NULL);
  ts_svg_text(out, x_px + 17, y_px, "start", "legend", label);
}
