#!/usr/bin/env python3
"""Fill the fields of a PDF form from a JSON object of field name -> value."""
import json
import sys


def main(argv):
    if len(argv) != 4:
        print("usage: fill.py FORM.pdf DATA.json OUT.pdf", file=sys.stderr)
        return 2
    form, data_path, out = argv[1:]
    with open(data_path, encoding="utf-8") as f:
        data = json.load(f)
    from pypdf import PdfReader, PdfWriter  # imported late: optional dependency
    writer = PdfWriter(clone_from=PdfReader(form))
    for page in writer.pages:
        writer.update_page_form_field_values(page, data, auto_regenerate=False)
    with open(out, "wb") as f:
        writer.write(f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
