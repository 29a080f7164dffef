"""Drives the official Python SDK's file calls against a basegate server; prints one JSON line.

Usage: python3 files_flow.py <server_url> <api_token> <local_png_path> <download_dir>
"""
import json
import os
import sys
from urllib.parse import unquote

from seatable_api import Base

server, token, png_path, download_dir = sys.argv[1:5]
base = Base(token, server)
base.auth()
out = {}
out['upload_link'] = base.get_file_upload_link()
out['bytes'] = base.upload_bytes_file('hello world.txt', b'hello from python')
out['bytes_again'] = base.upload_bytes_file('hello world.txt', b'second copy')
out['replaced'] = base.upload_bytes_file('hello world.txt', b'replaced!', replace=True)
out['image'] = base.upload_local_file(png_path, file_type='image')
out['download_link'] = base.get_file_download_link(unquote('/'.join(out['bytes']['url'].split('/')[-3:])))
saved = os.path.join(download_dir, 'saved.txt')
base.download_file(out['bytes']['url'], saved)
with open(saved, 'rb') as f:
    out['downloaded'] = f.read().decode()
saved_img = os.path.join(download_dir, 'saved.png')
base.download_file(out['image']['url'], saved_img)
out['downloaded_image_size'] = os.path.getsize(saved_img)
# The uploaded file's info dict and the image URL go into file and image cells unchanged.
row = base.append_row('Table1', {'Name': 'with files', 'Attachment': [out['bytes']], 'Picture': [out['image']['url']]})
out['row'] = [r for r in base.list_rows('Table1') if r.get('_id') == row['_id']][0]
print(json.dumps(out))
