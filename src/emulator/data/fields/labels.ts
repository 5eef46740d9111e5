/**
 * Human-readable labels for concepts, axes and members. Preference: a label from the data
 * (companyfacts `label`, a bundled label linkbase), else the QName's local part split into words
 * (`IPhoneMember` → `IPhone`, `ProductOrServiceAxis` → `Product Or Service`).
 */

export function splitCamel(local: string): string {
  return local
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .trim();
}

export function localName(qname: string): string {
  const i = qname.search(/[:#]/);
  return i >= 0 ? qname.slice(i + 1) : qname;
}

/** Label of a concept from its QName or metric id, when no label is known. */
export function conceptLabelFallback(qname: string): string {
  return splitCamel(localName(qname));
}

export function axisLabelFallback(axis: string): string {
  return splitCamel(localName(axis).replace(/Axis$/, ''));
}

export function memberLabelFallback(member: string): string {
  return splitCamel(localName(member).replace(/Member$/, ''));
}

/** Parses a label linkbase (`*_lab.xml`): concept QName (prefix_Local href fragment) → standard label. */
export function parseLabelLinkbase(xml: string): Map<string, string> {
  const locs = new Map<string, string>();
  for (const m of xml.matchAll(/<link:loc\b[^>]*?xlink:href="[^"#]*#([^"]+)"[^>]*?xlink:label="([^"]+)"/g)) {
    if (m[1] && m[2]) locs.set(m[2], m[1]);
  }
  for (const m of xml.matchAll(/<link:loc\b[^>]*?xlink:label="([^"]+)"[^>]*?xlink:href="[^"#]*#([^"]+)"/g)) {
    if (m[1] && m[2]) locs.set(m[1], m[2]);
  }
  const labels = new Map<string, { text: string; role: string }>();
  for (const m of xml.matchAll(/<link:label\b([^>]*)>([^<]*)<\/link:label>/g)) {
    const attrs = m[1] ?? '';
    const label = /xlink:label="([^"]+)"/.exec(attrs)?.[1];
    const role = /xlink:role="([^"]+)"/.exec(attrs)?.[1] ?? '';
    if (label && role.endsWith('/role/label')) labels.set(label, { text: (m[2] ?? '').trim(), role });
  }
  const out = new Map<string, string>();
  for (const m of xml.matchAll(/<link:labelArc\b([^>]*)\/?>/g)) {
    const attrs = m[1] ?? '';
    const from = /xlink:from="([^"]+)"/.exec(attrs)?.[1];
    const to = /xlink:to="([^"]+)"/.exec(attrs)?.[1];
    if (!from || !to) continue;
    const href = locs.get(from);
    const label = labels.get(to);
    if (!href || !label) continue;
    // href fragment is `prefix_LocalName`: turn into `prefix:LocalName`.
    const i = href.indexOf('_');
    if (i > 0) out.set(`${href.slice(0, i)}:${href.slice(i + 1)}`, label.text);
  }
  return out;
}

/** Strips the `[Axis]` / `[Member]` / `[Domain]` suffix the standard labels carry. */
export function cleanDimensionLabel(label: string): string {
  return label.replace(/\s*\[(?:Axis|Member|Domain|Line Items|Table|Abstract)\]\s*$/i, '').trim();
}
