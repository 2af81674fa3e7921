// included from lib/ only
