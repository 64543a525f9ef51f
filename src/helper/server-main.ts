// placeholder: replaced by the helper author
