from .main import SeaTableAPI, Account
from .context import context
from .date_utils import dateutils
from .convert_airtable import AirtableConvertor


Base = SeaTableAPI
