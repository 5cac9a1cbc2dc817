// The contrast of every visible text on a page open in Chromium, from the computed styles: each
// element with text of its own, its colour (an SVG text's fill) against its effective background
// (the ancestors' background colours, composed up to the first opaque one; an SVG text over a
// shape of its group: that shape's fill), as WCAG 2 relative luminance contrast ratios.
import type { Page } from 'playwright-core';

export interface TextContrast {
  text: string;
  /** The element, as tag.class. */
  element: string;
  color: string;
  background: string;
  ratio: number;
}

/** Every visible text whose contrast is below `minimum`, and how many texts were measured. */
export async function lowContrastText(page: Page, minimum = 4.5): Promise<{ measured: number; low: TextContrast[] }> {
  const all = await page.evaluate(measureTextContrast);
  return { measured: all.length, low: all.filter((t) => t.ratio < minimum) };
}

// Runs in the page: nothing from outside it.
function measureTextContrast(): TextContrast[] {
  type Rgba = [number, number, number, number];
  const parse = (css: string): Rgba => {
    const m = /rgba?\(([^)]+)\)/.exec(css);
    if (!m) return [0, 0, 0, 0]; // "none", "transparent"
    const [r, g, b, a] = m[1]!
      .split(/[\s,/]+/)
      .filter((p) => p !== '')
      .map(Number);
    return [r!, g!, b!, a ?? 1];
  };
  /** `top` painted over an opaque `below`. */
  const over = (top: Rgba, below: Rgba): Rgba => {
    const a = top[3];
    return [top[0] * a + below[0] * (1 - a), top[1] * a + below[1] * (1 - a), top[2] * a + below[2] * (1 - a), 1];
  };
  const luminance = ([r, g, b]: Rgba) => {
    const lin = (v: number) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  };
  const ratio = (a: Rgba, b: Rgba) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi! + 0.05) / (lo! + 0.05);
  };
  /** The colours painted behind an element, topmost first, until an opaque one. */
  const backgroundsOf = (element: Element): Rgba[] => {
    const layers: Rgba[] = [];
    // An SVG text over a shape drawn before it in its group (a shaded band): that shape's fill.
    if (element instanceof SVGTextElement) {
      const shape = element.parentElement?.querySelector('rect');
      if (shape) layers.push(parse(getComputedStyle(shape).fill));
    }
    for (let node: Element | null = element; node && (layers.length === 0 || layers[layers.length - 1]![3] < 1); node = node.parentElement) {
      const background = parse(getComputedStyle(node).backgroundColor);
      if (background[3] > 0) layers.push(background);
    }
    return layers;
  };
  const out: TextContrast[] = [];
  for (const element of document.querySelectorAll('body *')) {
    if (['SCRIPT', 'STYLE', 'title'].includes(element.tagName)) continue;
    const own = [...element.childNodes]
      .filter((n) => n.nodeType === Node.TEXT_NODE)
      .map((n) => n.textContent ?? '')
      .join('')
      .trim();
    if (own === '') continue;
    const style = getComputedStyle(element);
    if (element.getClientRects().length === 0 || style.visibility !== 'visible' || element.closest('svg title')) continue;
    const layers = backgroundsOf(element);
    let background: Rgba = [255, 255, 255, 1];
    for (const layer of layers.reverse()) background = over(layer, background);
    const color = over(parse(element instanceof SVGElement ? style.fill : style.color), background);
    out.push({
      text: own.slice(0, 60),
      element: `${element.tagName.toLowerCase()}.${element.getAttribute('class') ?? ''}`,
      color: style.color,
      background: `rgb(${background.slice(0, 3).map(Math.round).join(', ')})`,
      ratio: Math.round(ratio(color, background) * 100) / 100,
    });
  }
  return out;
}
